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
-- One ZREM and one ZADD per chunk of entries, not per entry.
for i = 1, #entries, 500 do
  local last = math.min(i + 499, #entries)
  redis.call('ZREM', KEYS[2], unpack(entries, i, last))
  local adds = {}
  for j = i, last do
    local entry = entries[j]
    local bar = string.find(entry, '|', 1, true)
    adds[#adds + 1] = ARGV[3]
    adds[#adds + 1] = bar and string.sub(entry, bar + 1) or entry
  end
  redis.call('ZADD', KEYS[1], unpack(adds))
end
return #entries
