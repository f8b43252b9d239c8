-- Does one chunk of RQ's requeue all of a failed registry (`rq requeue --all`: FailedJobRegistry.
-- requeue on each job), each job as rq_enqueue.lua's "requeue" does it, and only if it is still
-- in the registry with its hash there.
--
-- KEYS[1]  the failed registry, rq:failed:<q>
-- KEYS[2]  rq:queues
-- KEYS[3]  the queue, rq:queue:<q>
-- KEYS[4..] per job, its hash, dependents set and dependencies set, in the order of the ids
-- ARGV[1]  the queue's key as rq:queues holds it
-- ARGV[2]  the queue's name
-- ARGV[3]  now, as RQ writes a time
-- ARGV[4]  the timeout a job without one gets
-- ARGV[5..] the jobs' ids
--
-- Reply: one flag a job, 1 requeued, 0 gone from the registry, 2 left (its hash is gone).
local out = {}
for i = 5, #ARGV do
  local id, k = ARGV[i], 4 + (i - 5) * 3
  local job, dependents, dependencies = KEYS[k], KEYS[k + 1], KEYS[k + 2]
  if not redis.call('ZSCORE', KEYS[1], id) then
    out[#out + 1] = 0
  elseif redis.call('EXISTS', job) == 0 then
    out[#out + 1] = 2
  else
    redis.call('ZREM', KEYS[1], id)
    redis.call('HSET', job, 'started_at', '', 'ended_at', '', 'exc_info', 'x\156\3\0\0\0\0\1')
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
    redis.call('RPUSH', KEYS[3], id)
    out[#out + 1] = 1
  end
end
return out
