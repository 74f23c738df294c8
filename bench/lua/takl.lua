-- Lua 5.4 peer of bench/takl.src: the same work, the same output.
local Cell = {}
Cell.__index = Cell

function Cell.new(head, tail)
  return setmetatable({head = head, tail = tail}, Cell)
end

function Cell:shorter(other)
  local x, y = self, other
  while y ~= nil do
    if x == nil then return true end
    x = x.tail
    y = y.tail
  end
  return false
end

local function listn(n)
  if n == 0 then return nil end
  return Cell.new(n, listn(n - 1))
end

local function shorterp(x, y)
  if y == nil then return false end
  if x == nil then return true end
  return x:shorter(y)
end

local mas
function mas(x, y, z)
  if not shorterp(y, x) then return z end
  return mas(mas(x.tail, y, z), mas(y.tail, z, x), mas(z.tail, x, y))
end

local function length(l)
  local n = 0
  while l ~= nil do
    n = n + 1
    l = l.tail
  end
  return n
end

local reps = 60
if arg[1] then reps = math.floor(assert(tonumber(arg[1]), "N must be a number")) end

local l18, l12, l6 = listn(18), listn(12), listn(6)
local total = 0
for _ = 1, reps do
  total = total + length(mas(l18, l12, l6))
end
print("takl " .. reps .. " repetitions, total length " .. total)
