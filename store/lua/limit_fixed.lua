-- A fixed-window rate limiter: count the hit, and give the key the window's end as its expiry
-- when it has none (its first hit, or a key whose TTL was lost), so it never outlives its window.
--
-- KEYS[1]  the limiter's key: a string counter
-- ARGV[1]  the limit: hits allowed in the window
-- ARGV[2]  the window's end, unix ms
-- ARGV[3]  now, unix ms
--
-- Reply: {allowed (1 or 0), remaining hits in the window, ms until the window ends when refused}.
local n = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIREAT', KEYS[1], ARGV[2])
end
local limit = tonumber(ARGV[1])
if n > limit then
  return {0, 0, math.max(tonumber(ARGV[2]) - tonumber(ARGV[3]), 1)}
end
return {1, limit - n, 0}
