-- Lua 5.4 peer of bench/strings_maps.src: the same work, the same output.
-- gclab's built-ins (split, find, substr, has, len of a map) are written out
-- here; a map's length is kept in a counter.

local state = 12345
local function rnd(n)
  state = state * 16807 % 2147483647
  return state % n
end

local SYL = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo",
             "ze", "pu", "da", "fe", "gi", "ho", "ju", "wy"}

local function makeWord()
  local n = 1 + rnd(3)
  local w = ""
  for _ = 1, n do w = w .. SYL[rnd(16) + 1] end
  return w
end

-- The word's syllables (two bytes each) in reverse order: "kalo" -> "loka".
local function reverse(s)
  local r = ""
  for i = #s - 1, 1, -2 do r = r .. s:sub(i, i) .. s:sub(i + 1, i + 1) end
  return r
end

-- split keeping empty fields, as gclab's split(s, sep) with a non-empty sep
local function split(s, sep)
  local out, n, i = {}, 0, 1
  while true do
    local a, b = string.find(s, sep, i, true)
    n = n + 1
    if not a then
      out[n] = s:sub(i)
      return out
    end
    out[n] = s:sub(i, a - 1)
    i = b + 1
  end
end

local nlines = 20000
if arg[1] then nlines = math.floor(assert(tonumber(arg[1]), "LINES must be a number")) end

-- 1. Build the text.
local lines = {}
for i = 1, nlines do
  local words = {}
  local n = 5 + rnd(10)
  for j = 1, n do words[j] = makeWord() end
  lines[i] = table.concat(words, " ")
end
local text = table.concat(lines, "\n")
lines = nil
print("text: " .. #text .. " bytes")

-- 2. Split it again and count the words.
local counts, ncounts = {}, 0
local totalWords = 0
local split1 = split(text, "\n")
for _, line in ipairs(split1) do
  for _, w in ipairs(split(line, " ")) do
    local c = counts[w]
    if c == nil then
      counts[w] = 1
      ncounts = ncounts + 1
    else
      counts[w] = c + 1
    end
    totalWords = totalWords + 1
  end
end
print("lines: " .. #split1 .. ", words: " .. totalWords .. ", distinct: " .. ncounts)

-- 3. The most frequent word (ties: the smallest).
local best, bestCount = nil, 0
for w, c in pairs(counts) do
  if c > bestCount or (c == bestCount and w < best) then
    best = w
    bestCount = c
  end
end
print("most frequent: " .. best .. " x" .. bestCount)

-- 4. Words whose reverse is also a word.
local mirrored = 0
for w in pairs(counts) do
  if counts[reverse(w)] ~= nil then mirrored = mirrored + 1 end
end
print("mirrored words: " .. mirrored)

-- 5. Delete the rare words.
local threshold = math.floor(totalWords / ncounts)
local ks, nks = {}, 0
for w in pairs(counts) do nks = nks + 1; ks[nks] = w end
for _, w in ipairs(ks) do
  if counts[w] < threshold then
    counts[w] = nil
    ncounts = ncounts - 1
  end
end
print("words seen at least " .. threshold .. " times: " .. ncounts)

-- 6. Scan with find/substr; first-letter acronyms built byte by byte.
local kaCount, hash = 0, 0
for _, line in ipairs(split1) do
  local rest = line
  local p = string.find(rest, "ka", 1, true)
  while p do
    kaCount = kaCount + 1
    rest = rest:sub(p + 2)
    p = string.find(rest, "ka", 1, true)
  end
  local acr = ""
  for _, w in ipairs(split(line, " ")) do acr = acr .. w:sub(1, 1) end
  for i = 1, #acr do hash = (hash * 31 + acr:byte(i)) % 1000000007 end
end
print("'ka' occurrences: " .. kaCount .. ", acronym hash: " .. hash)

-- 7. A map with number keys.
local m, nm = {}, 0
local nkeys = nlines * 5
for i = 0, nkeys - 1 do
  m[i] = "v" .. i
  nm = nm + 1
end
for i = 0, nkeys - 1, 3 do
  if m[i] ~= nil then
    m[i] = nil
    nm = nm - 1
  end
end
local present, lengths = 0, 0
for i = 0, nkeys - 1 do
  if m[i] ~= nil then
    present = present + 1
    lengths = lengths + #m[i]
  end
end
print("number keys: " .. nm .. " left, " .. present .. " found, " .. lengths .. " bytes")

-- 8. Numbers through join, split and num.
local sum = 0
for _ = 1, math.ceil(nlines / 10) do
  local a = {}
  for i = 1, 100 do a[i] = rnd(100000) end
  for _, s in ipairs(split(table.concat(a, ","), ",")) do sum = sum + tonumber(s) end
end
print("number round trip sum: " .. sum)
