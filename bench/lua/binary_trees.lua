-- Lua 5.4 peer of bench/binary_trees.src: the same work, the same output.
local Node = {}
Node.__index = Node

function Node.new(left, right)
  return setmetatable({left = left, right = right}, Node)
end

function Node:check()
  if self.left == nil then return 1 end
  return 1 + self.left:check() + self.right:check()
end

local function bottomUpTree(depth)
  if depth > 0 then
    depth = depth - 1
    return Node.new(bottomUpTree(depth), bottomUpTree(depth))
  end
  return Node.new(nil, nil)
end

local n = 14
if arg[1] then n = math.floor(assert(tonumber(arg[1]), "N must be a number")) end

local minDepth = 4
local maxDepth = math.max(minDepth + 2, n)
local stretchDepth = maxDepth + 1

print("stretch tree of depth " .. stretchDepth .. "\t check: " ..
      bottomUpTree(stretchDepth):check())

local longLivedTree = bottomUpTree(maxDepth)

for depth = minDepth, maxDepth, 2 do
  local iterations = math.floor(2 ^ (maxDepth - depth + minDepth))
  local check = 0
  for _ = 1, iterations do
    check = check + bottomUpTree(depth):check()
  end
  print(iterations .. "\t trees of depth " .. depth .. "\t check: " .. check)
end

print("long lived tree of depth " .. maxDepth .. "\t check: " .. longLivedTree:check())
