-- Peer of bench/gcold.src (see there).
local mb = tonumber(arg[1]) or 32
local steps = tonumber(arg[2]) or 16
local kSwaps = 100
local kWork = 20000
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

local function inner(tree)
  local n = tree
  for _ = 1, 8 do
    if rand(2) == 0 then n = n.left else n = n.right end
  end
  return n
end

local busy = 0
for _ = 1, steps do
  forest[rand(mb) + 1] = make(depth)
  for _ = 1, 3 do local junk = make(depth) end
  for _ = 1, kSwaps do
    local a = inner(forest[rand(mb) + 1])
    local b = inner(forest[rand(mb) + 1])
    a.left, b.left = b.left, a.left
  end
  for w = 0, kWork - 1 do busy = (busy * 31 + w) % 1000003 end
end

local total = 0
for i = 1, mb do total = total + count(forest[i]) end
print("trees " .. mb .. " nodes " .. total .. " busy " .. busy)
