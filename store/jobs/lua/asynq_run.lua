-- Moves one asynq task from its scheduled, retry or archived set to pending, as asynq's
-- Inspector.RunTask does (the task's id out of its state's set, LPUSHed onto pending, its hash's
-- state set to pending), only if the task is still in the state the page showed: a task that
-- ran, moved or was deleted since is left as it is.
--
-- KEYS[1]  the task's hash, asynq:{<queue>}:t:<id>
-- KEYS[2]  the queue's pending list
-- KEYS[3]  the sorted set of the state the page showed (scheduled, retry or archived)
-- ARGV[1]  the task's id
-- ARGV[2]  that state's name
--
-- Reply: "pending"; or why the task was left: "gone" (no hash), "moved" (in another state now),
-- "not_in_set" (its hash names the state, but the set does not hold it: asynq's RunTask fails
-- there too).
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 'gone'
end
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[2] then
  return 'moved'
end
if redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then
  return 'not_in_set'
end
redis.call('LPUSH', KEYS[2], ARGV[1])
redis.call('HSET', KEYS[1], 'state', 'pending')
return 'pending'
