-- The three calls the engine makes per request, compiled once per thread
-- state so each is one call into LuaJIT. The globals are looked up on every
-- call, as wrk does (a script may replace request or response as it goes).
local type, error, tonumber, find, sub = type, error, tonumber, string.find, string.sub

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

-- response(status, headers, body): the headers arrive as one string of
-- "name\0value\0" pairs (one string across the boundary instead of two per
-- header) and are split into the table the script receives.
local function on_response(status, body, packed)
   local handle = response
   if type(handle) ~= "function" then
      return
   end
   local headers, at = {}, 1
   while true do
      local name_end = find(packed, "\0", at, true)
      if not name_end then
         break
      end
      local value_end = find(packed, "\0", name_end + 1, true)
      headers[sub(packed, at, name_end - 1)] = sub(packed, name_end + 1, value_end - 1)
      at = value_end + 1
   end
   handle(status, headers, body)
end

return next_request, next_delay, on_response
