-- Extends a lock's time to live, only for its holder.
--
-- KEYS[1]  the lock's key
-- ARGV[1]  the holder's token
-- ARGV[2]  the new time to live, in ms
--
-- Reply: 1 extended, 0 not held by this token.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
