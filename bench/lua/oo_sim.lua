-- Lua 5.4 peer of bench/oo_sim.src: the same work, the same output.
-- Classes are metatables; every class has an init, called by new.

local function class(name, super)
  local c = {name = name, super = super}
  c.__index = c
  if super then setmetatable(c, {__index = super}) end
  c.new = function(...)
    local o = setmetatable({}, c)
    o:init(...)
    return o
  end
  return c
end

local function isa(o, c)
  local k = getmetatable(o)
  while k do
    if k == c then return true end
    k = k.super
  end
  return false
end

local Rng = class("Rng")
function Rng:init(seed) self.state = seed end
function Rng:next(n)
  self.state = self.state * 16807 % 2147483647
  return self.state % n
end

local Account = class("Account")
function Account:init(id, owner, balance)
  self.id = id; self.balance = balance; self.ops = 0
  self.owner = owner
end
function Account:limit() return 0 end
function Account:canWithdraw(amount) return amount <= self.balance + self:limit() end
function Account:deposit(amount)
  self.balance = self.balance + amount
  self.ops = self.ops + 1
end
function Account:withdraw(amount)
  if not self:canWithdraw(amount) then return false end
  self.balance = self.balance - amount
  self.ops = self.ops + 1
  self:charge(amount)
  return true
end
function Account:charge(amount) end
function Account:monthEnd() return 0 end
function Account:kind() return "basic" end

local Checking = class("Checking", Account)
function Checking:init(id, owner, balance)
  Account.init(self, id, owner, balance)
  self.fees = 0
end
function Checking:limit() return 500 end
function Checking:charge(amount)
  if self.balance < 0 then
    self.balance = self.balance - 2
    self.fees = self.fees + 2
  end
end
function Checking:monthEnd()
  local fee = 0
  if self.balance < 1000 then fee = 5 end
  self.balance = self.balance - fee
  self.fees = self.fees + fee
  return -fee
end
function Checking:kind() return "checking" end

local Savings = class("Savings", Account)
function Savings:init(id, owner, balance, rate)
  Account.init(self, id, owner, balance)
  self.rate = rate
end
function Savings:monthEnd()
  local interest = math.floor(self.balance * self.rate / 10000)
  self.balance = self.balance + interest
  return interest
end
function Savings:kind() return "savings" end

local Premium = class("Premium", Savings)
function Premium:limit() return 2000 end
function Premium:bonus()
  if self.balance > 5000 then
    self.balance = self.balance + 3
    return 3
  end
  return 0
end
function Premium:monthEnd() return Savings.monthEnd(self) + self:bonus() end
function Premium:kind() return "premium" end

local Tx = class("Tx")
function Tx:init(amount) self.amount = amount end
function Tx:apply(bank) return false end

local Deposit = class("Deposit", Tx)
function Deposit:init(to, amount)
  Tx.init(self, amount)
  self.to = to
end
function Deposit:apply(bank)
  self.to:deposit(self.amount)
  bank.deposited = bank.deposited + self.amount
  return true
end

local Withdrawal = class("Withdrawal", Tx)
function Withdrawal:init(from, amount)
  Tx.init(self, amount)
  self.from = from
end
function Withdrawal:apply(bank)
  if self.from:withdraw(self.amount) then
    bank.withdrawn = bank.withdrawn + self.amount
    return true
  end
  return false
end

local Transfer = class("Transfer", Tx)
function Transfer:init(from, to, amount)
  Tx.init(self, amount)
  self.from = from
  self.to = to
end
function Transfer:apply(bank)
  if self.from:withdraw(self.amount) then
    self.to:deposit(self.amount)
    bank.transferred = bank.transferred + self.amount
    return true
  end
  return false
end

local Bank = class("Bank")
function Bank:init(n, rng)
  self.rng = rng
  self.deposited = 0; self.withdrawn = 0; self.transferred = 0
  self.ok = 0; self.failed = 0; self.steps = 0
  self.accounts = {}
  for i = 0, n - 1 do
    local owner = "owner" .. i
    local balance = 100 + rng:next(5000)
    local k = i % 4
    local a
    if k == 0 then a = Account.new(i, owner, balance)
    elseif k == 1 then a = Checking.new(i, owner, balance)
    elseif k == 2 then a = Savings.new(i, owner, balance, 5 + i % 10)
    else a = Premium.new(i, owner, balance, 8) end
    self.accounts[#self.accounts + 1] = a
  end
  self.recent = {}
end
function Bank:pick() return self.accounts[self.rng:next(#self.accounts) + 1] end
function Bank:step()
  local r = self.rng:next(10)
  local amount = 1 + self.rng:next(1000)
  local tx
  if r < 4 then tx = Deposit.new(self:pick(), amount)
  elseif r < 7 then tx = Withdrawal.new(self:pick(), amount)
  else
    local from = self:pick()
    local to = self:pick()
    tx = Transfer.new(from, to, amount)
  end
  if tx:apply(self) then self.ok = self.ok + 1 else self.failed = self.failed + 1 end
  self.recent[self.steps % 256] = tx
  self.steps = self.steps + 1
end
function Bank:monthEnd()
  local total = 0
  for _, a in ipairs(self.accounts) do total = total + a:monthEnd() end
  return total
end

local steps = 600000
if arg[1] then steps = math.floor(assert(tonumber(arg[1]), "STEPS must be a number")) end

local bank = Bank.new(1000, Rng.new(42))
local monthly = 0
for i = 1, steps do
  bank:step()
  if i % 1000 == 0 then monthly = monthly + bank:monthEnd() end
end

local kinds = {"basic", "checking", "savings", "premium"}
local count, total, ops = {}, {}, {}
for _, k in ipairs(kinds) do count[k] = 0; total[k] = 0; ops[k] = 0 end
local fees = 0
local checksum = 0
local richest = bank.accounts[1]
for _, a in ipairs(bank.accounts) do
  local k = a:kind()
  count[k] = count[k] + 1
  total[k] = total[k] + a.balance
  ops[k] = ops[k] + a.ops
  if isa(a, Checking) then fees = fees + a.fees end
  if a.balance > richest.balance then richest = a end
  -- gclab's % takes the dividend's sign, like math.fmod
  checksum = math.fmod(checksum * 31 + a.balance + a.id, 1000000007)
end
for _, k in ipairs(kinds) do
  print(k .. ": " .. count[k] .. " accounts, balance " .. total[k] .. ", ops " .. ops[k])
end
print("deposited " .. bank.deposited .. ", withdrawn " .. bank.withdrawn ..
      ", transferred " .. bank.transferred)
print("ok " .. bank.ok .. ", failed " .. bank.failed .. ", fees " .. fees ..
      ", month-end net " .. monthly)
print("richest: " .. richest.owner .. " (" .. richest:kind() .. ") " .. richest.balance)
local last = bank.recent[(bank.steps - 1) % 256]
print("last transaction: " .. getmetatable(last).name .. " of " .. last.amount)
print("checksum " .. checksum)
