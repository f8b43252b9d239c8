-- Puts RQ jobs of a registry back on their queue, as RQ does, each only if it is still in that
-- registry and its hash is there (RQ enqueues no job it cannot fetch): one job for the per-task
-- action, a chunk of them for a bulk one.
--
--   ARGV[5] "schedule": scheduled jobs, run now (RQ's scheduler: queue.enqueue_job with
--                       at_front as the job says, then the registry's remove)
--   ARGV[5] "requeue":  failed or started jobs (Registry.requeue: ZREM, the job's started_at,
--                       ended_at and exc_info cleared, then queue.enqueue_job at the back;
--                       `rq requeue --all` does it to each failed job)
--
-- enqueue_job: the queue in rq:queues; the job's status queued, origin the queue, enqueued_at
-- now, a timeout when it has none (the queue's default); the job's keys given its ttl again when
-- it has one; its id pushed onto the queue (RPUSH; LPUSH at the front).
--
-- KEYS[1]  the registry (rq:scheduled:<q>, rq:failed:<q> or rq:wip:<q>)
-- KEYS[2]  rq:queues
-- KEYS[3]  the queue, rq:queue:<q>
-- KEYS[4..] per job, its hash rq:job:<id>, its dependents set rq:job:<id>:dependents and its
--           dependencies set rq:job::<id>:dependencies (sic: RQ writes two colons), in the
--           order of the ids
-- ARGV[1]  the queue's key as rq:queues holds it (KEYS[3])
-- ARGV[2]  the queue's name
-- ARGV[3]  now, as RQ writes a time: "YYYY-MM-DDTHH:MM:SS.ffffffZ"
-- ARGV[4]  the timeout a job without one gets, in seconds
-- ARGV[5]  "schedule" or "requeue"
-- ARGV[6..] the jobs' ids
--
-- Reply: one flag a job, 1 enqueued, 0 gone from the registry, 2 left (its hash is gone).
local out = {}
for i = 6, #ARGV do
  local id, k = ARGV[i], 4 + (i - 6) * 3
  local job, dependents, dependencies = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  if not redis.call('ZSCORE', KEYS[1], id) then
    out[#out + 1] = 0
  elseif redis.call('EXISTS', job) == 0 then
    out[#out + 1] = 2
  else
    redis.call('ZREM', KEYS[1], id)
    if ARGV[5] == 'requeue' then
      -- zlib's compression of nothing: what RQ stores for an exc_info it cleared.
      redis.call('HSET', job, 'started_at', '', 'ended_at', '', 'exc_info', 'x\156\3\0\0\0\0\1')
    end
    redis.call('SADD', KEYS[2], ARGV[1])
    redis.call('HSET', job, 'status', 'queued', 'origin', ARGV[2], 'enqueued_at', ARGV[3])
    local timeout = redis.call('HGET', job, 'timeout')
    if not timeout or timeout == '' then
      redis.call('HSET', job, 'timeout', ARGV[4])
    end
    local ttl = tonumber(redis.call('HGET', job, 'ttl'))
    if ttl and ttl > 0 then
      redis.call('EXPIRE', job, ttl)
      redis.call('EXPIRE', dependents, ttl)
      redis.call('EXPIRE', dependencies, ttl)
    end
    if ARGV[5] == 'schedule' and redis.call('HGET', job, 'enqueue_at_front') == '1' then
      redis.call('LPUSH', KEYS[3], id)
    else
      redis.call('RPUSH', KEYS[3], id)
    end
    out[#out + 1] = 1
  end
end
return out
