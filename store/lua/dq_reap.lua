-- Returns in-flight tasks whose visibility deadline has passed to their queue, due at once: their
-- worker died or stalled, and another will claim them.
--
-- KEYS[1]  the queue: a sorted set, score = due time in the queue's unit
-- KEYS[2]  the in-flight set: score = visibility deadline in ms (same slot)
-- ARGV[1]  now, in ms: deadlines at or below it have passed
-- ARGV[2]  the most tasks to return
-- ARGV[3]  now, in the queue's unit: the returned tasks' due time
--
-- Reply: how many tasks were returned.
local tasks = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, task in ipairs(tasks) do
  redis.call('ZREM', KEYS[2], task)
  redis.call('ZADD', KEYS[1], ARGV[3], task)
end
return #tasks
