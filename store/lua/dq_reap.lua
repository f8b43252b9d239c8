-- Returns in-flight tasks whose visibility deadline has passed to their queue, due at once: their
-- worker died or stalled, and another will claim them.
--
-- KEYS[1]  the queue: a sorted set, score = due time in the queue's unit
-- KEYS[2]  the in-flight set: "<claim id>|<task>" entries, score = deadline in ms (same slot)
-- ARGV[1]  now, in ms: deadlines at or below it have passed
-- ARGV[2]  the most tasks to return
-- ARGV[3]  now, in the queue's unit: the returned tasks' due time
--
-- Reply: how many tasks were returned.
local entries = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
for _, entry in ipairs(entries) do
  redis.call('ZREM', KEYS[2], entry)
  local bar = string.find(entry, '|', 1, true)
  local task = entry
  if bar then
    task = string.sub(entry, bar + 1)
  end
  redis.call('ZADD', KEYS[1], ARGV[3], task)
end
return #entries
