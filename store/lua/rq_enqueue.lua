-- Puts one RQ job of a registry back on its queue, as RQ does, in one step: only if the job is
-- still in that registry, and its hash is there (RQ enqueues no job it cannot fetch).
--
--   ARGV[5] "schedule": a scheduled job, due now (RQ's scheduler: queue.enqueue_job with
--                       at_front as the job says, then the registry's remove)
--   ARGV[5] "requeue":  a failed or started job (Registry.requeue: ZREM, the job's started_at,
--                       ended_at and exc_info cleared, then queue.enqueue_job at the back)
--
-- enqueue_job: the queue in rq:queues; the job's status queued, origin the queue, enqueued_at
-- now, a timeout when it has none (the queue's default); the job's keys given its ttl again when
-- it has one; its id pushed onto the queue (RPUSH; LPUSH at the front).
--
-- KEYS[1]  the registry (rq:scheduled:<q>, rq:failed:<q> or rq:wip:<q>)
-- KEYS[2]  rq:queues
-- KEYS[3]  the queue, rq:queue:<q>
-- KEYS[4]  the job's hash, rq:job:<id>
-- KEYS[5]  its dependents set, rq:job:<id>:dependents
-- KEYS[6]  its dependencies set, rq:job::<id>:dependencies (sic: RQ writes two colons)
-- ARGV[1]  the job's id
-- ARGV[2]  the queue's key as rq:queues holds it (KEYS[3])
-- ARGV[3]  the queue's name
-- ARGV[4]  now, as RQ writes a time: "YYYY-MM-DDTHH:MM:SS.ffffffZ"
-- ARGV[5]  "schedule" or "requeue"
-- ARGV[6]  the timeout a job without one gets, in seconds
--
-- Reply: "enqueued"; or why the job was left: "gone" (not in the registry), "no_job" (its hash
-- is gone).
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 'gone'
end
if redis.call('EXISTS', KEYS[4]) == 0 then
  return 'no_job'
end
redis.call('ZREM', KEYS[1], ARGV[1])
if ARGV[5] == 'requeue' then
  -- zlib's compression of nothing: what RQ stores for an exc_info it cleared.
  redis.call('HSET', KEYS[4], 'started_at', '', 'ended_at', '', 'exc_info', 'x\156\3\0\0\0\0\1')
end
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[4], 'status', 'queued', 'origin', ARGV[3], 'enqueued_at', ARGV[4])
local timeout = redis.call('HGET', KEYS[4], 'timeout')
if not timeout or timeout == '' then
  redis.call('HSET', KEYS[4], 'timeout', ARGV[6])
end
local ttl = tonumber(redis.call('HGET', KEYS[4], 'ttl'))
if ttl and ttl > 0 then
  redis.call('EXPIRE', KEYS[4], ttl)
  redis.call('EXPIRE', KEYS[5], ttl)
  redis.call('EXPIRE', KEYS[6], ttl)
end
if ARGV[5] == 'schedule' and redis.call('HGET', KEYS[4], 'enqueue_at_front') == '1' then
  redis.call('LPUSH', KEYS[3], ARGV[1])
else
  redis.call('RPUSH', KEYS[3], ARGV[1])
end
return 'enqueued'
