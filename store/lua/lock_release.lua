-- Releases a lock only for its holder: a process whose lock expired and was taken by another must
-- not delete the other's.
--
-- KEYS[1]  the lock's key
-- ARGV[1]  the holder's token
--
-- Reply: 1 released, 0 not held by this token.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
