-- A fixed-window rate limiter: windows are aligned to the server's clock (TIME); a hit is counted
-- only when it is allowed, and the key expires at its window's end.
--
-- KEYS[1]  the limiter's key: a string counter
-- ARGV[1]  the limit: hits allowed in the window
-- ARGV[2]  the window, in ms
--
-- Reply: {allowed (1 or 0), remaining hits in the window, ms until the window ends when refused}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit = tonumber(ARGV[2]), tonumber(ARGV[1])
local finish = (math.floor(now / window) + 1) * window
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
if n >= limit then
  if redis.call('PTTL', KEYS[1]) < 0 then
    redis.call('PEXPIREAT', KEYS[1], finish) -- a key whose TTL was lost heals
  end
  return {0, 0, math.max(finish - now, 1)}
end
n = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIREAT', KEYS[1], finish)
end
return {1, limit - n, 0}
