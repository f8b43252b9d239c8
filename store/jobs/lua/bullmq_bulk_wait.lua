-- Does one chunk of BullMQ 5's Queue.retryJobs({state: 'failed'}) or Queue.promoteJobs(), whose
-- one script (moveJobsToWait) moves the jobs of a state's set to the queue's wait list (paused
-- when the queue is), in the same steps, each job only if it is still in the set:
--   failed jobs: HDEL finishedOn processedOn failedReason on the job's hash
--   each job:    XADD <events> MAXLEN ~ <opts.maxLenEvents, 10000 set when absent> * event
--                waiting jobId <id> prev <state>; ZREM <state> <id>; LPUSH <target> <id>
--   then, when a job moved and the queue is neither paused nor at its concurrency: ZADD
--   <marker> 0 "0"
--
-- KEYS[1] the state's set (failed or delayed)   KEYS[2] events   KEYS[3] wait   KEYS[4] paused
-- KEYS[5] meta   KEYS[6] active   KEYS[7] marker   KEYS[8..] the jobs' hashes, in the ids' order
-- ARGV[1] the state ("failed" or "delayed")   ARGV[2..] the jobs' ids
--
-- Reply: one flag a job, 1 moved, 0 gone; or the string "version" when the queue's meta names
-- no BullMQ 5, and nothing is written.
local rcall = redis.call
local version = rcall('HGET', KEYS[5], 'version')
if not version or string.sub(version, 1, 9) ~= 'bullmq:5.' then
  return 'version'
end
local attrs = rcall('HMGET', KEYS[5], 'paused', 'concurrency')
local target, held = KEYS[3], false
if attrs[1] then
  target, held = KEYS[4], true
elseif attrs[2] and rcall('LLEN', KEYS[6]) >= tonumber(attrs[2]) then
  held = true
end
local out, moved = {}, 0
local maxEvents
for i = 2, #ARGV do
  local id, job = ARGV[i], KEYS[i + 6]
  if rcall('ZSCORE', KEYS[1], id) then
    if ARGV[1] == 'failed' then
      rcall('HDEL', job, 'finishedOn', 'processedOn', 'failedReason')
    end
    if not maxEvents then
      maxEvents = rcall('HGET', KEYS[5], 'opts.maxLenEvents')
      if not maxEvents then
        maxEvents = 10000
        rcall('HSET', KEYS[5], 'opts.maxLenEvents', maxEvents)
      end
    end
    rcall('XADD', KEYS[2], 'MAXLEN', '~', maxEvents, '*', 'event', 'waiting', 'jobId', id, 'prev', ARGV[1])
    rcall('ZREM', KEYS[1], id)
    rcall('LPUSH', target, id)
    moved = moved + 1
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
if moved > 0 and not held then
  rcall('ZADD', KEYS[7], 0, '0')
end
return out
