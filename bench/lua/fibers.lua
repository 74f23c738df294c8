-- Lua 5.4 peer of bench/fibers.src: the same work, the same output.
local function generator(seed, count)
  return coroutine.create(function()
    local x = seed
    for _ = 1, count do
      x = x * 16807 % 2147483647
      coroutine.yield(x)
    end
    return nil
  end)
end

local function filter(source, modulus)
  return coroutine.create(function()
    while true do
      local _, v = coroutine.resume(source, nil)
      if v == nil then return nil end
      if v % modulus ~= 0 then coroutine.yield(v % 1000) end
    end
  end)
end

local items = 200000
if arg[1] then items = math.floor(assert(tonumber(arg[1]), "N must be a number")) end

local total, kept = 0, 0
for round = 0, 9 do
  local f = filter(generator(round + 1, items), 3)
  while true do
    local _, v = coroutine.resume(f, nil)
    if v == nil then break end
    total = total + v
    kept = kept + 1
  end
  for i = 0, items / 10 - 1 do
    local g = coroutine.create(function(a)
      local b = coroutine.yield(a + 1)
      return a + b
    end)
    local _, r1 = coroutine.resume(g, i)
    local _, r2 = coroutine.resume(g, 2)
    total = total + r1 + r2
  end
  total = total % 1000000007
end
print(string.format("fibers: %d items kept, total %d", kept, total))
