-- Removes one BullMQ job that belongs to no flow, as BullMQ 5's Job.remove() does (checked
-- against bullmq 5.81.5), only if it is still in a state the page showed, the queue was written
-- by BullMQ 5, and BullMQ would remove it (not locked by a worker, not the next job of a job
-- scheduler):
--   the id leaves the first of completed, waiting-children, delayed, failed, prioritized, wait,
--   paused, active that holds it; its deduplication key (de:<id>) and pending next job
--   (dn:<id>) are deleted when the key still names the job; the job's hash and its logs,
--   dependencies, processed, failed and unsuccessful keys are deleted; and, when any was there,
--   the event stream gets "removed" with the state it left, trimmed to the queue's
--   opts.maxLenEvents (set to 10000 when the queue has none).
-- A job of a flow (a parent with children, or a child whose parent is there) is left: BullMQ
-- also updates the other jobs of the flow, which this script does not. The queue's keys are
-- named from its prefix, as BullMQ's own scripts name them.
--
-- KEYS[1]     the queue's meta hash
-- KEYS[2]     the queue's job scheduler set (repeat)
-- KEYS[3]     the job's hash
-- ARGV[1]     the job's id
-- ARGV[2]     the queue's key prefix, "<prefix>:<queue>:"
-- ARGV[3..n]  the states the page showed the job in (wait, paused and active are lists, the
--             others sorted sets)
--
-- Reply: "removed"; or why it was left: "gone", "version", "locked", "scheduler", "flow".
local id, prefix, job = ARGV[1], ARGV[2], KEYS[3]
local lists = {wait = true, paused = true, active = true}
local version = redis.call('HGET', KEYS[1], 'version')
if not version or string.sub(version, 1, 9) ~= 'bullmq:5.' then
  return 'version'
end
local shown = false
for i = 3, #ARGV do
  if lists[ARGV[i]] then
    shown = shown or redis.call('LPOS', prefix .. ARGV[i], id) ~= false
  else
    shown = shown or redis.call('ZSCORE', prefix .. ARGV[i], id) ~= false
  end
end
if not shown then
  return 'gone'
end
local rjk = redis.call('HGET', job, 'rjk')
if rjk then
  local millis = redis.call('ZSCORE', KEYS[2], rjk)
  if millis and id == 'repeat:' .. rjk .. ':' .. millis then
    return 'scheduler'
  end
end
if redis.call('EXISTS', job .. ':lock') == 1 then
  return 'locked'
end
local parent = redis.call('HGET', job, 'parentKey')
if parent and parent ~= '' and redis.call('EXISTS', parent) == 1 or
    redis.call('EXISTS', job .. ':dependencies', job .. ':processed', job .. ':failed', job .. ':unsuccessful') > 0 then
  return 'flow'
end
local prev = 'unknown'
for _, state in ipairs({'completed', 'waiting-children', 'delayed', 'failed', 'prioritized'}) do
  if redis.call('ZSCORE', prefix .. state, id) then
    redis.call('ZREM', prefix .. state, id)
    prev = state
    break
  end
end
if prev == 'unknown' then
  for _, state in ipairs({'wait', 'paused', 'active'}) do
    if redis.call('LREM', prefix .. state, 1, id) == 1 then
      prev = state
      break
    end
  end
end
local dedup = redis.call('HGET', job, 'deid')
if dedup and redis.call('GET', prefix .. 'de:' .. dedup) == id then
  redis.call('DEL', prefix .. 'de:' .. dedup, prefix .. 'dn:' .. dedup)
end
if redis.call('DEL', job, job .. ':logs', job .. ':dependencies', job .. ':processed', job .. ':failed',
    job .. ':unsuccessful') > 0 then
  local most = redis.call('HGET', KEYS[1], 'opts.maxLenEvents')
  if not most then
    most = 10000
    redis.call('HSET', KEYS[1], 'opts.maxLenEvents', most)
  end
  redis.call('XADD', prefix .. 'events', 'MAXLEN', '~', most, '*', 'event', 'removed', 'jobId', id, 'prev', prev)
end
return 'removed'
