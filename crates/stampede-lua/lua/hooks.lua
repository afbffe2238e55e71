-- Two of the calls the engine makes per request, compiled once per thread
-- state so each is one call into LuaJIT. The globals are looked up on every
-- call, as wrk does (a script may replace request or response as it goes).
local type = type

-- request(): the script's, or else wrk.request() (the pre-formatted one).
-- Its first value as it is: raw_call.rs reads it as wrk's script_request
-- does (lua_tolstring: a string, a number as its text, anything else, nil
-- included, no bytes at all).
local function next_request()
   local build = request
   if type(build) == "function" then
      return (build())
   end
   return (wrk.request())
end

-- delay(): its first value as it is, read in raw_call.rs as wrk's
-- script_delay reads it (lua_tonumber: nil, nothing or not a number is 0).
local function next_delay()
   local delay = delay
   if type(delay) ~= "function" then
      return 0
   end
   return (delay())
end

-- response(status, headers, body) is called from Rust (raw_call.rs), which
-- builds only the arguments the function reads, as wrk builds them in C.

return next_request, next_delay
