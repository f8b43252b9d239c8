-- Does one chunk of a bulk action on one asynq queue's scheduled, retry or archived set, each
-- task as asynq's Inspector does it to a whole set (v0.26, internal/rdb/inspect.go: runAllCmd,
-- archiveAllCmd, deleteAllCmd), and each only if it is still where its page showed it: in the
-- set, its hash saying that state. A task gone or moved since is skipped (flag 0).
--
-- Every key is the queue's, in its hash slot ({<queue>}), so a chunk is atomic on a cluster too.
--
-- KEYS[1]  the set the tasks are in, asynq:{<queue>}:<state>
-- KEYS[2]  where they go: the pending list (run) or the archived set (archive); for a delete,
--          the set again (unused)
-- KEYS[3..] the tasks' hashes, asynq:{<queue>}:t:<id>, in the order of the ids
-- ARGV[1]  "run", "archive" or "delete"
-- ARGV[2]  the state the tasks are in (scheduled, retry or archived)
-- ARGV[3]  archive: now, in Unix seconds (the archived score); ARGV[4] the cutoff (now less
--          asynq's 90 days); ARGV[5] asynq's largest archive (10000); unused otherwise
-- ARGV[6..] the tasks' ids
--
-- run:     LPUSH pending <id>, HSET state pending                       (runAllCmd)
-- archive: ZADD archived <now> <id>, HSET state archived, and after the chunk the archived
--          set trimmed as archiveAllCmd trims it: ZREMRANGEBYSCORE -inf <cutoff>,
--          ZREMRANGEBYRANK 0 -<largest>
-- delete:  the unique lock deleted when it is still the task's, the hash deleted (deleteAllCmd)
-- Each id leaves its set (ZREM): the Inspector's DEL of the whole set, one task at a time.
--
-- Reply: one flag a task, 1 done, 0 gone, 2 left in the set.
local out = {}
local op, state = ARGV[1], ARGV[2]
for i = 6, #ARGV do
  local id, hash = ARGV[i], KEYS[i - 3]
  if redis.call('HGET', hash, 'state') ~= state then
    if redis.call('ZSCORE', KEYS[1], id) then
      out[#out + 1] = 2
    else
      out[#out + 1] = 0
    end
  elseif redis.call('ZREM', KEYS[1], id) == 1 then
    if op == 'run' then
      redis.call('LPUSH', KEYS[2], id)
      redis.call('HSET', hash, 'state', 'pending')
    elseif op == 'archive' then
      redis.call('ZADD', KEYS[2], ARGV[3], id)
      redis.call('HSET', hash, 'state', 'archived')
    else
      local unique = redis.call('HGET', hash, 'unique_key')
      if unique and unique ~= '' and redis.call('GET', unique) == id then
        redis.call('DEL', unique)
      end
      redis.call('DEL', hash)
    end
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if op == 'archive' then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[4])
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[5]))
end
return out
