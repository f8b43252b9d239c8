-- Returns one task of a list queue's processing list to the queue's tail, where the next pop
-- takes it: a task acknowledged or returned since the page was read is not there, and nothing
-- is written.
--
-- KEYS[1]  the queue: a list pushed at the head (LPUSH) and popped from the tail
-- KEYS[2]  the processing list (same slot)
-- ARGV[1]  the task, exactly as stored
--
-- Reply: 1 returned, 0 the task is gone.
if redis.call('LREM', KEYS[2], 1, ARGV[1]) == 0 then
  return 0
end
redis.call('RPUSH', KEYS[1], ARGV[1])
return 1
