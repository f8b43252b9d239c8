-- Makes one later task of a delay queue due now, only if it is still there and still later: a
-- task claimed, deleted or already due since the page was read is left as it is.
--
-- KEYS[1]  the queue: a sorted set, score = due time in the queue's unit
-- ARGV[1]  the task (the member, exactly as stored)
-- ARGV[2]  the score of now, in the queue's unit: the task's new due time
-- ARGV[3]  the largest score due by now, in the queue's unit (a task at or below it is due)
--
-- Reply: "moved"; or why it was left: "gone" (not in the queue), "due" (due already).
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not score then
  return 'gone'
end
if tonumber(score) <= tonumber(ARGV[3]) then
  return 'due'
end
redis.call('ZADD', KEYS[1], 'XX', ARGV[2], ARGV[1])
return 'moved'
