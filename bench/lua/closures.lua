-- Lua 5.4 peer of bench/closures.src: the same work, the same output.
local function counter(start, step)
  local n = start
  return function()
    n = n + step
    return n
  end
end

local function account(balance)
  local ops = 0
  local function deposit(x)
    balance = balance + x
    ops = ops + 1
  end
  local function withdraw(x)
    if x <= balance then
      balance = balance - x
      ops = ops + 1
      return true
    end
    return false
  end
  local function report() return balance * 1000 + ops end
  return {deposit, withdraw, report}
end

local function compose(f, g) return function(x) return f(g(x)) end end
local function adder(k) return function(x) return x + k end end
local function scaler(k) return function(x) return x * k % 1000003 end end

local function fold(a, f, init)
  local acc = init
  for i = 1, #a do acc = f(acc, a[i]) end
  return acc
end

local function map_array(a, f)
  local out = {}
  for i = 1, #a do out[i] = f(a[i]) end
  return out
end

local rounds = 100000
if arg[1] then rounds = math.floor(assert(tonumber(arg[1]), "N must be a number")) end

local data = {}
for i = 0, 63 do data[i + 1] = i * 7 % 64 end

local total = 0
for r = 0, rounds - 1 do
  local c = counter(r, 3)
  for _ = 1, 20 do c() end
  total = total + c()

  local acct = account(100)
  local deposit, withdraw = acct[1], acct[2]
  for i = 0, 15 do
    deposit(i)
    withdraw(i * 2)
  end
  total = total + acct[3]()

  local pipeline = compose(scaler(r % 97 + 1), compose(adder(r), adder(1)))
  local mapped = map_array(data, pipeline)
  total = total + fold(mapped, function(acc, x) return (acc + x) % 1000003 end, 0)

  local keep = {}
  for i = 0, 7 do keep[#keep + 1] = function() return i * r end end
  for j = 1, #keep do total = total + keep[j]() end
  total = total % 1000000007
end
print(string.format("closures %d rounds, total %d", rounds, total))
