-- Lua 5.4 peer of bench/gcbench.src: the same work, the same output.
local function Node(l, r)
  return {left = l, right = r, i = 0, j = 0}
end

local kMaxTreeDepth = 14
if arg[1] then
  kMaxTreeDepth = math.floor(assert(tonumber(arg[1]), "D must be a number"))
  assert(kMaxTreeDepth >= 4, "D >= 4")
end
local kStretchTreeDepth = kMaxTreeDepth + 2
local kLongLivedTreeDepth = kMaxTreeDepth
local kArraySize = 500000
local kMinTreeDepth = 4

local function treeSize(i) return math.floor(2 ^ (i + 1)) - 1 end

local function numIters(i) return math.floor(2 * treeSize(kStretchTreeDepth) / treeSize(i)) end

local function populate(depth, node)
  if depth <= 0 then return end
  depth = depth - 1
  node.left = Node(nil, nil)
  node.right = Node(nil, nil)
  populate(depth, node.left)
  populate(depth, node.right)
end

local function makeTree(depth)
  if depth <= 0 then return Node(nil, nil) end
  return Node(makeTree(depth - 1), makeTree(depth - 1))
end

local function countNodes(node)
  if node == nil then return 0 end
  return 1 + countNodes(node.left) + countNodes(node.right)
end

local function timeConstruction(depth)
  local iNumIters = numIters(depth)
  print("Creating " .. iNumIters .. " trees of depth " .. depth)
  for _ = 1, iNumIters do
    local tempTree = Node(nil, nil)
    populate(depth, tempTree)
  end
  print("\tTop down construction done")
  for _ = 1, iNumIters do
    local tempTree = makeTree(depth)
  end
  print("\tBottom up construction done")
end

print("Garbage Collector Test")
print(" Stretching memory with a binary tree of depth " .. kStretchTreeDepth)
local tempTree = makeTree(kStretchTreeDepth)
tempTree = nil

print(" Creating a long-lived binary tree of depth " .. kLongLivedTreeDepth)
local longLivedTree = Node(nil, nil)
populate(kLongLivedTreeDepth, longLivedTree)

print(" Creating a long-lived array of " .. kArraySize .. " doubles")
local array = {}
for i = 1, kArraySize do array[i] = 0.0 end   -- index i+1 holds element i
for i = 1, math.floor(kArraySize / 2) - 1 do
  array[i + 1] = 1 / i
end

for d = kMinTreeDepth, kMaxTreeDepth, 2 do
  timeConstruction(d)
end

if longLivedTree == nil or array[1001] ~= 1 / 1000 then
  print("Failed")
end
print("long-lived tree nodes: " .. countNodes(longLivedTree))
print("long-lived array[1000] * 1000 = " .. string.format("%d", array[1001] * 1000))
print("Completed")
