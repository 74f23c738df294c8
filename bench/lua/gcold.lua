-- Peer of bench/gcold.src (see there).
local mb = tonumber(arg[1]) or 32
local steps = tonumber(arg[2]) or 4
local depth = 15

local function make(d)
  local n = {left = nil, right = nil}
  if d > 0 then
    n.left = make(d - 1)
    n.right = make(d - 1)
  end
  return n
end

local function count(n)
  if n == nil then return 0 end
  return 1 + count(n.left) + count(n.right)
end

local state = 42
local function rand(n)
  state = (state * 16807) % 2147483647
  return state % n
end

local forest = {}
for i = 1, mb do forest[i] = make(depth) end

for _ = 1, steps do
  forest[rand(mb) + 1] = make(depth)
  for _ = 1, 3 do local junk = make(depth) end
  collectgarbage()
end

local total = 0
for i = 1, mb do total = total + count(forest[i]) end
print("trees " .. mb .. " nodes " .. total)
