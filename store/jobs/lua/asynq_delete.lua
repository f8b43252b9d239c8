-- Deletes one asynq task that is not running, as asynq's Inspector.DeleteTask does (its id out
-- of its state's list or set, its unique lock released when the lock is still its own, its hash
-- deleted), only if the task is still in the state the page showed.
--
-- KEYS[1]  the task's hash, asynq:{<queue>}:t:<id>
-- KEYS[2]  the list (pending) or sorted set (scheduled, retry, archived) of that state
-- ARGV[1]  the task's id
-- ARGV[2]  that state's name
--
-- Reply: "deleted"; or why the task was left: "gone", "moved", "not_in_set" (as asynq_run.lua).
-- The unique lock's key is named by the task's hash, in the queue's hash slot, as asynq reads it.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 'gone'
end
if redis.call('HGET', KEYS[1], 'state') ~= ARGV[2] then
  return 'moved'
end
local removed
if ARGV[2] == 'pending' then
  removed = redis.call('LREM', KEYS[2], 0, ARGV[1])
else
  removed = redis.call('ZREM', KEYS[2], ARGV[1])
end
if removed == 0 then
  return 'not_in_set'
end
local unique = redis.call('HGET', KEYS[1], 'unique_key')
if unique and unique ~= '' and redis.call('GET', unique) == ARGV[1] then
  redis.call('DEL', unique)
end
redis.call('DEL', KEYS[1])
return 'deleted'
