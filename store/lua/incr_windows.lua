-- Adds deltas to windowed counter keys and gives any key without a TTL its window-aligned expiry.
--
-- KEYS[i]       a counter key (on Redis Cluster every key of one call is in one hash slot)
-- ARGV[2i-1]    the integer delta for KEYS[i]
-- ARGV[2i]      unix seconds at which KEYS[i] expires: its window's end plus the retention
--
-- Reply: an array with one element per key: the key's new value as an integer, or, when that key
-- could not be incremented (wrong type, not an integer, overflow), the error text as a string.
-- A bad key never stops the others: each INCRBY runs under pcall, and a key whose INCRBY failed
-- is left exactly as it was (its TTL is not touched).
local reply = {}
for i = 1, #KEYS do
  local key = KEYS[i]
  local delta = ARGV[2 * i - 1]
  local v = redis.pcall('INCRBY', key, delta)
  if type(v) == 'table' and v.err then
    reply[i] = v.err
  else
    -- A value equal to the delta means the key was just created: it has no TTL, so skip asking.
    -- Otherwise TTL -1 means the key lost its expiry (seed 003's leak): heal it now. Setting the
    -- same window-aligned instant again, as for a key that had counted down to 0, is harmless.
    if v == tonumber(delta) or redis.call('TTL', key) == -1 then
      redis.call('EXPIREAT', key, ARGV[2 * i])
    end
    reply[i] = v
  end
end
return reply
