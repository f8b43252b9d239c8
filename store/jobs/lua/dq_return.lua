-- Returns one in-flight task of a delay queue to the queue, due now: the move the reaper makes
-- for an entry whose deadline passed, made for this one entry whatever its deadline. An entry
-- acknowledged or reaped since the page was read is not there, and nothing is written.
--
-- KEYS[1]  the queue: a sorted set, score = due time in the queue's unit
-- KEYS[2]  the in-flight set: "<claim id>|<task>" entries, score = deadline in ms (same slot)
-- ARGV[1]  the in-flight entry, exactly as stored
-- ARGV[2]  now, in the queue's unit: the returned task's due time
--
-- Reply: 1 returned, 0 the entry is gone.
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then
  return 0
end
local bar = string.find(ARGV[1], '|', 1, true)
local task = ARGV[1]
if bar then
  task = string.sub(ARGV[1], bar + 1)
end
redis.call('ZADD', KEYS[1], ARGV[2], task)
return 1
