-- Releases a lock whose TTL is gone (held until someone deletes it: its holder died between a
-- SETNX and its EXPIRE, or a PERSIST took the TTL away), only if it is still that: the same
-- holder, and still no TTL. A lock taken again, or given a TTL, since it was read is left.
--
-- KEYS[1]  the lock's key
-- ARGV[1]  the holder (the value read)
--
-- Reply: "released"; or why it was left: "gone" (no key), "other_holder" (another value),
-- "has_ttl" (it expires by itself).
local holder = redis.call('GET', KEYS[1])
if not holder then
  return 'gone'
end
if holder ~= ARGV[1] then
  return 'other_holder'
end
if redis.call('PTTL', KEYS[1]) ~= -1 then
  return 'has_ttl'
end
redis.call('DEL', KEYS[1])
return 'released'
