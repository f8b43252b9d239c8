-- Adds deltas to windowed counter keys and gives any key without a TTL its window-aligned expiry,
-- once per call even when the call is sent again.
--
-- KEYS[1]       the sender's sequence key (in the same hash slot as the counters); unused when
--               ARGV[1] is 0
-- KEYS[1+i]     counter key i (on Redis Cluster every key of one call is in one hash slot)
-- ARGV[1]       the call's sequence number on its sender's lane; 0 skips the duplicate check
-- ARGV[2]       seconds the sequence key is kept
-- ARGV[1+2i]    the integer delta for KEYS[1+i]
-- ARGV[2+2i]    unix seconds at which KEYS[1+i] expires: its window's end plus the retention
--
-- Reply: "DUPLICATE" when the sequence key already holds this sequence number or a later one
-- (the call was applied before and its reply lost: nothing is added again). Otherwise an array
-- with one element per counter key: its new value as an integer, or, when that key could not be
-- incremented (wrong type, not an integer, overflow), the error text as a string. A bad key never
-- stops the others: each INCRBY runs under pcall, and a key whose INCRBY failed is left exactly as
-- it was (its TTL is not touched).
local seq = tonumber(ARGV[1])
if seq > 0 then
  local last = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
  if seq <= last then
    return 'DUPLICATE'
  end
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
end
local reply = {}
for i = 2, #KEYS do
  local key = KEYS[i]
  local delta = ARGV[2 * i - 1]
  local v = redis.pcall('INCRBY', key, delta)
  if type(v) == 'table' and v.err then
    reply[i - 1] = v.err
  else
    -- A value equal to the delta means the key was just created: it has no TTL, so skip asking.
    -- Otherwise TTL -1 means the key lost its expiry (seed 003's leak): heal it now. Setting the
    -- same window-aligned instant again, as for a key that had counted down to 0, is harmless.
    if v == tonumber(delta) or redis.call('TTL', key) == -1 then
      redis.call('EXPIREAT', key, ARGV[2 * i])
    end
    reply[i - 1] = v
  end
end
return reply
