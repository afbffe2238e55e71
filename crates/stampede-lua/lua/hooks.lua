-- Two of the calls the engine makes per request, compiled once per thread
-- state so each is one call into LuaJIT. The globals are looked up on every
-- call, as wrk does (a script may replace request or response as it goes).
local type, error, tonumber = type, error, tonumber

-- request(): the script's, or else wrk.request() (the pre-formatted one).
local function next_request()
   local build = request
   local bytes
   if type(build) == "function" then
      bytes = build()
   else
      bytes = wrk.request()
   end
   if type(bytes) ~= "string" then
      error("request() must return a string, got " .. type(bytes), 0)
   end
   return bytes
end

-- delay(): milliseconds, as a number (wrk: lua_tonumber, 0 if not one).
local function next_delay()
   local delay = delay
   if type(delay) ~= "function" then
      return 0
   end
   return tonumber(delay()) or 0
end

-- response(status, headers, body) is called from Rust (raw_call.rs), which
-- builds only the arguments the function reads, as wrk builds them in C.

return next_request, next_delay
