-- Claims up to n due tasks of a delay queue: each leaves the queue for the in-flight set, scored
-- by its visibility deadline, in one step, so two workers never claim the same task and a worker
-- that dies holding tasks loses none (the reaper returns them once their deadline passes).
--
-- An in-flight entry is "<claim id>|<task>": acknowledging removes only that claim's entry, so a
-- worker that acknowledges late (its task was reaped and claimed again) cannot remove the new
-- claim's entry and lose the task.
--
-- KEYS[1]  the queue: a sorted set, score = due time in the queue's unit (ms or s)
-- KEYS[2]  the in-flight set: a sorted set, score = visibility deadline in ms (same slot)
-- ARGV[1]  now, in the queue's unit: tasks scored at or below it are due
-- ARGV[2]  n, the most tasks to claim (at least 1)
-- ARGV[3]  the deadline, in ms, given to the claimed tasks
-- ARGV[4]  the claim id
--
-- Reply: the claimed tasks, oldest due first.
local tasks = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
-- One ZREM and one ZADD per chunk of tasks, not per task (chunks keep unpack within Lua's stack).
for i = 1, #tasks, 500 do
  local last = math.min(i + 499, #tasks)
  redis.call('ZREM', KEYS[1], unpack(tasks, i, last))
  local adds = {}
  for j = i, last do
    adds[#adds + 1] = ARGV[3]
    adds[#adds + 1] = ARGV[4] .. '|' .. tasks[j]
  end
  redis.call('ZADD', KEYS[2], unpack(adds))
end
return tasks
