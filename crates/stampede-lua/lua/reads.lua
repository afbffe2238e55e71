-- Which of response(status, headers, body)'s arguments a function can
-- read, from its LuaJIT bytecode (jit.util): a bit mask, 1 status, 2
-- headers, 4 body; 7 (all) whenever unsure. An argument it cannot read is
-- not built (worker.rs): no headers table, no body string per response.
--
-- A parameter is "read" if any instruction names its slot as an operand
-- (mode dst or var), or a range of slots that starts at or below it (mode
-- base: calls, returns of several values, for loops). Parameters are the
-- lowest slots of a function, and the hidden slots some instructions reach
-- below their base (ITERC's generator, TSETM's table) are locals allocated
-- after them, so this misses no read. Unsure, so 7: not a Lua function,
-- varargs (`...`), nested functions (a closure may capture a parameter),
-- or jit.util missing. The debug library (debug.getlocal) is not open.
local ok, util = pcall(require, "jit.util")
local band, bor, shl, shr = bit.band, bit.bor, bit.lshift, bit.rshift
local type, min = type, math.min

-- Operand modes, as lj_bc.h numbers them.
local DST, BASE, VAR, RBASE, LIT = 1, 2, 3, 4, 6

return function(f)
   if not ok or type(f) ~= "function" then
      return 7
   end
   local info = util.funcinfo(f)
   if info.bytecodes == nil or info.isvararg or info.children then
      return 7
   end
   local params = min(info.params, 3)
   local mask = 0
   local function slots(first, last)
      for slot = first, min(last, params - 1) do
         mask = bor(mask, shl(1, slot))
      end
   end
   -- pc 0 is the function header.
   for pc = 1, info.bytecodes - 1 do
      local ins, m = util.funcbc(f, pc)
      if ins == nil then
         return 7
      end
      local a = band(shr(ins, 8), 0xff)
      local ma, mb, mc = band(m, 7), band(shr(m, 3), 15), band(shr(m, 7), 15)
      local b, c = shr(ins, 24), band(shr(ins, 16), 0xff)
      if mb == 0 then
         c = shr(ins, 16) -- the D operand
      end
      if ma == DST or ma == VAR then
         slots(a, a)
      elseif ma == BASE then
         slots(a, params)
      elseif ma == RBASE and mc == LIT then
         -- RET0, RET1, RET: slots a .. a + d - 2 (JLOOP's base is above
         -- the parameters, whatever its d).
         slots(a, a + c - 2)
      end
      if mb == VAR then
         slots(b, b)
      elseif mb == RBASE then
         slots(b, params) -- CAT's range
      end
      if mc == VAR or mc == DST then
         slots(c, c)
      end
   end
   return mask
end
