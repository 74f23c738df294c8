-- Lua 5.4 peer of bench/numeric.src: the same work, the same output.
local sqrt = math.sqrt

local PI = 3.141592653589793
local SOLAR_MASS = 4 * PI * PI
local DAYS_PER_YEAR = 365.24

local function Body(x, y, z, vx, vy, vz, mass)
  return {
    x = x, y = y, z = z,
    vx = vx * DAYS_PER_YEAR, vy = vy * DAYS_PER_YEAR, vz = vz * DAYS_PER_YEAR,
    mass = mass * SOLAR_MASS,
  }
end

-- x with d digits after the point, rounded half up on |x| (as numeric.src).
local function fixed(x, d)
  local sign = ""
  if x < 0 then sign = "-"; x = -x end
  local scale = 1.0
  for _ = 1, d do scale = scale * 10 end
  local r = math.floor(x * scale + 0.5)
  local ip = math.floor(r / scale)
  local fs = string.format("%d", r - ip * scale)
  while #fs < d do fs = "0" .. fs end
  return sign .. string.format("%d", ip) .. "." .. fs
end

local function makeBodies()
  return {
    Body(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
    Body(4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
         1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
         9.54791938424326609e-04),
    Body(8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
         -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
         2.85885980666130812e-04),
    Body(1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
         2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
         4.36624404335156298e-05),
    Body(1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
         2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
         5.15138902046611451e-05),
  }
end

local function offsetMomentum(bodies)
  local px, py, pz = 0.0, 0.0, 0.0
  for _, b in ipairs(bodies) do
    px = px + b.vx * b.mass
    py = py + b.vy * b.mass
    pz = pz + b.vz * b.mass
  end
  local sun = bodies[1]
  sun.vx = -px / SOLAR_MASS
  sun.vy = -py / SOLAR_MASS
  sun.vz = -pz / SOLAR_MASS
end

local function energy(bodies)
  local e = 0.0
  local n = #bodies
  for i = 1, n do
    local b = bodies[i]
    e = e + 0.5 * b.mass * (b.vx * b.vx + b.vy * b.vy + b.vz * b.vz)
    for j = i + 1, n do
      local b2 = bodies[j]
      local dx = b.x - b2.x
      local dy = b.y - b2.y
      local dz = b.z - b2.z
      e = e - (b.mass * b2.mass) / sqrt(dx * dx + dy * dy + dz * dz)
    end
  end
  return e
end

local function advance(bodies, dt)
  local n = #bodies
  for i = 1, n do
    local b = bodies[i]
    for j = i + 1, n do
      local b2 = bodies[j]
      local dx = b.x - b2.x
      local dy = b.y - b2.y
      local dz = b.z - b2.z
      local d2 = dx * dx + dy * dy + dz * dz
      local mag = dt / (d2 * sqrt(d2))
      local bm = b.mass * mag
      local b2m = b2.mass * mag
      b.vx = b.vx - dx * b2m
      b.vy = b.vy - dy * b2m
      b.vz = b.vz - dz * b2m
      b2.vx = b2.vx + dx * bm
      b2.vy = b2.vy + dy * bm
      b2.vz = b2.vz + dz * bm
    end
  end
  for _, b in ipairs(bodies) do
    b.x = b.x + dt * b.vx
    b.y = b.y + dt * b.vy
    b.z = b.z + dt * b.vz
  end
end

-- i and j are kept as floats: gclab's numbers are doubles.
local function evalA(i, j) return 1 / ((i + j) * (i + j + 1) / 2 + i + 1) end

local function timesVec(v, u, n, transposed)
  for i = 0, n - 1 do
    local a = 0.0
    for j = 0, n - 1 do
      if transposed then a = a + evalA(j * 1.0, i * 1.0) * v[j]
      else a = a + evalA(i * 1.0, j * 1.0) * v[j] end
    end
    u[i] = a
  end
end

local function timesAtA(v, u, n, tmp)
  timesVec(v, tmp, n, false)
  timesVec(tmp, u, n, true)
end

local function NumArray(n)
  local a = {}
  for i = 0, n - 1 do a[i] = 0.0 end
  return a
end

local function spectralNorm(n)
  local u, v, tmp = NumArray(n), NumArray(n), NumArray(n)
  for i = 0, n - 1 do u[i] = 1.0 end
  for _ = 1, 10 do
    timesAtA(u, v, n, tmp)
    timesAtA(v, u, n, tmp)
  end
  local vBv, vv = 0.0, 0.0
  for i = 0, n - 1 do
    vBv = vBv + u[i] * v[i]
    vv = vv + v[i] * v[i]
  end
  return sqrt(vBv / vv)
end

local steps = 200000
if arg[1] then steps = math.floor(assert(tonumber(arg[1]), "STEPS must be a number")) end

local bodies = makeBodies()
offsetMomentum(bodies)
print(fixed(energy(bodies), 9))
for _ = 1, steps do advance(bodies, 0.01) end
print(fixed(energy(bodies), 9))
print(fixed(spectralNorm(100), 9))
