-- A scalable Bloom filter on plain Redis (bloom.go), as RedisBloom's BF.MADD and BF.MEXISTS
-- work: an element is held when some sub-filter has each of its k bits set (it was added, or is
-- a false positive). "add" adds each element not held: its bits are set in the newest
-- sub-filter, which is first followed by a new, larger one when it holds its capacity; the
-- filter is created with ARGV[2..4] when its metadata hash is absent. "exists" only reads.
--
-- Positions (docs/bloom.md): h = SHA-1 of the element; h1, h2 its first two 32-bit big-endian
-- words (the caller computes them); the sub-filter of m bits and k hashes sets bits
-- (h1 + j * h2 + (j^3 - j) / 6) mod m, j = 0 .. k - 1 (enhanced double hashing).
--
-- KEYS[1]  the filter's metadata hash
-- KEYS[2..] its sub-filters' bitmaps, in order: those it has and those it may open
-- ARGV[1]  "add" or "exists"
-- ARGV[2]  the first sub-filter's capacity, when the filter is created
-- ARGV[3]  the target error rate, when it is created
-- ARGV[4]  the expansion (each new sub-filter's capacity over the last's; 0: never scales)
-- ARGV[5]  the largest number of sub-filters
-- ARGV[6]  the largest sub-filter, in bits
-- ARGV[7..] per element, its h1 and h2
--
-- Reply: one flag an element. add: 1 added, 0 held already, -1 not added because the filter is
-- full (it does not scale, or one more sub-filter would pass a bound, or its key was not
-- named). exists: 1 held, 0 not (all 0 when the filter is absent). Or {"keys", n} when it has n
-- sub-filters and fewer bitmap keys were named. An error when the key holds a hash that is not a
-- filter's metadata (WRONGTYPE when it is no hash): another program's key is never written.
local meta = KEYS[1]
local LN2 = math.log(2)
local adding, most, maxBits = ARGV[1] == 'add', tonumber(ARGV[5]), tonumber(ARGV[6])

local f = redis.call('HMGET', meta, 'filters', 'capacity', 'error_rate', 'expansion', 'layout')
local n = tonumber(f[1]) or 0
local capacity, errorRate, expansion = tonumber(f[2]), tonumber(f[3]), tonumber(f[4])
if f[5] ~= 'hourglass-bloom 1' and redis.call('EXISTS', meta) == 1 then
  -- another program's hash: never written, nor read as a filter
  return redis.error_reply('ERR bloom ' .. meta .. ': the hash there holds no Bloom filter metadata (layout field)')
end

-- sized gives a sub-filter of capacity c and error rate e its bits and hashes.
local function sized(c, e)
  local bits = math.ceil(c * -math.log(e) / (LN2 * LN2))
  local hashes = math.ceil(-math.log(e) / LN2)
  return bits, hashes
end

-- open adds sub-filter i (0-based) to the metadata: capacity C * X^i, error rate E / 2^(i+1),
-- so that the filter's compound rate stays below E. False when it would pass a bound.
local function open(i)
  if i >= most or i + 2 > #KEYS then
    return false
  end
  local c = capacity * expansion ^ i
  local e = errorRate / 2 ^ (i + 1)
  local bits, hashes = sized(c, e)
  if bits > maxBits then
    return false
  end
  local p = 'f' .. i .. ':'
  redis.call('HSET', meta, p .. 'bits', bits, p .. 'hashes', hashes, p .. 'capacity', c,
    p .. 'error_rate', e, p .. 'added', 0, 'filters', i + 1)
  return true
end

if n == 0 and adding then
  capacity, errorRate, expansion = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
  redis.call('HSET', meta, 'layout', 'hourglass-bloom 1', 'capacity', ARGV[2], 'error_rate', ARGV[3],
    'expansion', ARGV[4], 'added', 0)
  if not open(0) then
    return redis.error_reply('ERR bloom ' .. meta .. ': its first sub-filter passes the largest size')
  end
  n = 1
end
if #KEYS < n + 1 then
  return { 'keys', n }
end

local subs = {}
local function load(i)
  local p = 'f' .. (i - 1) .. ':'
  local v = redis.call('HMGET', meta, p .. 'bits', p .. 'hashes', p .. 'capacity', p .. 'added')
  subs[i] = { key = KEYS[i + 1], bits = tonumber(v[1]), hashes = tonumber(v[2]),
    capacity = tonumber(v[3]), added = tonumber(v[4]) }
end
for i = 1, n do
  load(i)
end

-- bitfield runs BITFIELD (or BITFIELD_RO) with t's operations of step arguments each; on a
-- server without it (the console's embedded Redis), the same one bit a call, SETBIT or GETBIT.
local hasBitfield = true
local function bitfield(cmd, key, t, step)
  if hasBitfield then
    local r = redis.pcall(cmd, key, unpack(t))
    if type(r) ~= 'table' or not r.err then
      return r
    end
    if not string.find(string.lower(r.err), 'unknown') then
      error(r)
    end
    hasBitfield = false
  end
  local out = {}
  for i = 3, #t, step do
    if step == 4 then
      out[#out + 1] = redis.call('SETBIT', key, t[i], 1)
    else
      out[#out + 1] = redis.call('GETBIT', key, t[i])
    end
  end
  return out
end

-- at gives a sub-filter's BITFIELD arguments for h1, h2: GET (or SET to 1) of each position.
local templates = {}
local function at(s, op, h1, h2)
  local step = op == 'SET' and 4 or 3
  local key = s.key .. op
  local t = templates[key]
  if not t then
    t = {}
    for j = 0, s.hashes - 1 do
      t[j * step + 1], t[j * step + 2] = op, 'u1'
      if step == 4 then
        t[j * step + 4] = 1
      end
    end
    templates[key] = t
  end
  for j = 0, s.hashes - 1 do
    t[j * step + 3] = (h1 + j * h2 + (j * j * j - j) / 6) % s.bits
  end
  return t
end

local function all(bits)
  for j = 1, #bits do
    if bits[j] == 0 then
      return false
    end
  end
  return true
end

-- put sets the element's bits in the newest sub-filter, after it checked the others: 1 added,
-- 0 held there already. Once it holds its capacity, the element is looked for there first,
-- then set in a new one; -1 when none can be opened.
local function put(h1, h2)
  local s = subs[n]
  if s.added >= s.capacity then
    if all(bitfield('BITFIELD_RO', s.key, at(s, 'GET', h1, h2), 3)) then
      return 0
    end
    if expansion == 0 or not open(n) then
      return -1
    end
    n = n + 1
    load(n)
    s = subs[n]
  end
  if all(bitfield('BITFIELD', s.key, at(s, 'SET', h1, h2), 4)) then
    return 0
  end
  s.added = s.added + 1
  return 1
end

local out, added = {}, 0
for a = 7, #ARGV, 2 do
  local h1, h2 = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local flag = nil
  for i = (adding and n - 1 or n), 1, -1 do
    if all(bitfield('BITFIELD_RO', subs[i].key, at(subs[i], 'GET', h1, h2), 3)) then
      flag = adding and 0 or 1
      break
    end
  end
  if not flag then
    flag = adding and put(h1, h2) or 0
  end
  if adding and flag == 1 then
    added = added + 1
  end
  out[#out + 1] = flag
end
if added > 0 then
  for i = 1, n do
    redis.call('HSET', meta, 'f' .. (i - 1) .. ':added', subs[i].added)
  end
  redis.call('HINCRBY', meta, 'added', added)
end
return out
