-- wrk.format(method, path, headers, body), in Lua so a request() that calls
-- it per request (counter.lua) stays inside LuaJIT: each argument defaults
-- to the wrk table's value; the headers table formatted gets a missing Host
-- from wrk.headers and Content-Length set to the body's length (nil, so
-- removed, without a body), as wrk does. Headers come out in pairs() order.
local wrk = ...
local format, concat, len = string.format, table.concat, string.len

return function(method, path, headers, body)
   method = method or wrk.method
   path = path or wrk.path
   headers = headers or wrk.headers
   body = body or wrk.body
   if type(headers) ~= "table" then
      error("wrk.format: headers must be a table, got " .. type(headers), 2)
   end
   if headers.Host == nil then
      headers.Host = wrk.headers.Host
   end
   headers["Content-Length"] = body and len(body) or nil
   local out = { format("%s %s HTTP/1.1\r\n", method, path) }
   local n = 1
   for name, value in pairs(headers) do
      n = n + 1
      out[n] = format("%s: %s\r\n", name, value)
   end
   out[n + 1] = "\r\n"
   out[n + 2] = body or ""
   return concat(out)
end
