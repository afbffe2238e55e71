-- wrk.format(method, path, headers, body), in Lua so a request() that calls
-- it per request (counter.lua) stays inside LuaJIT: each argument defaults
-- to the wrk table's value; the headers table formatted gets a missing Host
-- (nil or false) from wrk.headers and Content-Length set to the body's
-- length (nil, so removed, without a body), as wrk.lua's wrk.format does.
-- Headers come out in pairs() order.
--
-- The request is written into one reused string.buffer (LuaJIT's), so the
-- only string made per call is the request itself: wrk's string.format per
-- line and table.concat make a string per header line and a table besides.
-- Each piece reads as string.format's %s reads it (strings and numbers as
-- they are, anything else through tostring); a body that is neither a string
-- nor a number is an error (string.len refuses it), as in wrk.
local wrk = ...
local len, tostring, type, pairs, error = string.len, tostring, type, pairs, error
local new_buffer = require("string.buffer").new
local shared = new_buffer()
-- True while a call is writing into `shared`: a __tostring that formats a
-- request of its own gets a buffer of its own.
local busy = false

local function text(value)
   local kind = type(value)
   if kind == "string" or kind == "number" then
      return value
   end
   return tostring(value)
end

return function(method, path, headers, body)
   method = method or wrk.method
   path = path or wrk.path
   headers = headers or wrk.headers
   body = body or wrk.body
   if type(headers) ~= "table" then
      error("wrk.format: headers must be a table, got " .. type(headers), 2)
   end
   -- wrk.lua's truth tests: a Host of false is missing too, and a body of
   -- false sets Content-Length to false (printed "false"), as in wrk.
   if not headers.Host then
      headers.Host = wrk.headers.Host
   end
   headers["Content-Length"] = body and len(body)
   local nested = busy
   local out = nested and new_buffer() or shared:reset()
   busy = true
   out:put(text(method), " ", text(path), " HTTP/1.1\r\n")
   for name, value in pairs(headers) do
      out:put(text(name), ": ", text(value), "\r\n")
   end
   out:put("\r\n")
   if body then
      out:put(body)
   end
   local request = out:tostring()
   busy = nested
   return request
end
