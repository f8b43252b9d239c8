-- A sliding-window rate limiter in one step: drop hits older than the window, count the rest, and
-- record this hit only when under the limit. A check-then-add runs these as three commands, so
-- two clients can both see limit-1 and both add: this cannot. The time is the server's (TIME), so
-- clients whose clocks differ still share one window.
--
-- KEYS[1]  the limiter's key: a sorted set of hits, score = hit time in ms
-- ARGV[1]  the window, in ms
-- ARGV[2]  the limit: hits allowed in any window
-- ARGV[3]  a member unique to this hit (two hits in one millisecond must not collapse into one)
--
-- Reply: {allowed (1 or 0), remaining hits in the window, ms until a hit would be allowed (0 when
-- allowed)}. The key expires a window after its last hit, so an idle limiter leaves nothing behind.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
if n < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, limit - n - 1, 0}
end
-- Refused: a hit is allowed again once enough of the window's hits have aged out to bring the
-- count under the limit (n - limit + 1 of them, the oldest first).
local aging = redis.call('ZRANGE', KEYS[1], n - limit, n - limit, 'WITHSCORES')
local retry = window
if aging[2] then
  retry = math.max(tonumber(aging[2]) + window - now, 1)
end
return {0, 0, retry}
