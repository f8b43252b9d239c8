-- Tells whether a scalable Bloom filter (bloom.go, bloom_add.lua) may hold each element, as
-- RedisBloom's BF.MEXISTS does: 1 when some sub-filter has each of the element's k bits set
-- (it was added, or is a false positive), 0 when none has (it was never added). Reads only.
--
-- KEYS[1]  the filter's metadata hash
-- KEYS[2..] its sub-filters' bitmaps, in order (at least as many as it has)
-- ARGV[1..] per element, its h1 and h2 (bloom_add.lua)
--
-- Reply: one flag an element; all 0 when the filter is absent; or {"keys", n} when it has n
-- sub-filters and fewer bitmap keys were named.
local meta = KEYS[1]
local n = tonumber(redis.call('HGET', meta, 'filters')) or 0
if #KEYS < n + 1 then
  return { 'keys', n }
end
local subs = {}
for i = 1, n do
  local p = 'f' .. (i - 1) .. ':'
  local v = redis.call('HMGET', meta, p .. 'bits', p .. 'hashes')
  subs[i] = { key = KEYS[i + 1], bits = tonumber(v[1]), hashes = tonumber(v[2]) }
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

local templates = {}
local out = {}
for a = 1, #ARGV, 2 do
  local h1, h2 = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
  local there = 0
  for i = n, 1, -1 do
    local s = subs[i]
    local t = templates[i]
    if not t then
      t = {}
      for j = 0, s.hashes - 1 do
        t[j * 3 + 1], t[j * 3 + 2] = 'GET', 'u1'
      end
      templates[i] = t
    end
    for j = 0, s.hashes - 1 do
      t[j * 3 + 3] = (h1 + j * h2 + (j * j * j - j) / 6) % s.bits
    end
    local all = true
    for _, b in ipairs(bitfield('BITFIELD_RO', s.key, t, 3)) do
      if b == 0 then
        all = false
        break
      end
    end
    if all then
      there = 1
      break
    end
  end
  out[#out + 1] = there
end
return out
