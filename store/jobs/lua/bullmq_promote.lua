-- Promotes one delayed BullMQ job to waiting, as BullMQ 5's Job.promote() does (checked against
-- bullmq 5.81.5), only if it is still delayed and the queue was written by BullMQ 5:
--   the id leaves delayed; a v4 "0:<n>" marker at the head of the target list is dropped; the
--   id is LPUSHed onto wait (paused while the queue is paused), or, for a job with a priority,
--   added to prioritized scored priority * 2^32 + the next priority counter; the marker set gets
--   "0" (a job is ready) unless the queue is paused or at its concurrency; the event stream gets
--   "waiting" (prev "delayed"); the job's delay becomes 0.
--
-- KEYS[1] delayed  KEYS[2] wait  KEYS[3] paused  KEYS[4] meta  KEYS[5] prioritized
-- KEYS[6] active   KEYS[7] pc (priority counter)  KEYS[8] events  KEYS[9] marker
-- KEYS[10] the job's hash
-- ARGV[1]  the job's id
--
-- Reply: "promoted"; or why it was left: "gone" (not delayed), "version" (the queue's meta names
-- no BullMQ 5).
local version = redis.call('HGET', KEYS[4], 'version')
if not version or string.sub(version, 1, 9) ~= 'bullmq:5.' then
  return 'version'
end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 'gone'
end
local priority = tonumber(redis.call('HGET', KEYS[10], 'priority')) or 0
local attrs = redis.call('HMGET', KEYS[4], 'paused', 'concurrency')
local target, held = KEYS[2], false
if attrs[1] then
  target, held = KEYS[3], true
elseif attrs[2] then
  held = redis.call('LLEN', KEYS[6]) >= tonumber(attrs[2])
end
local head = redis.call('LINDEX', target, 0)
if head and string.sub(head, 1, 2) == '0:' then
  redis.call('LPOP', target)
end
if priority == 0 then
  redis.call('LPUSH', target, ARGV[1])
else
  local counter = redis.call('INCR', KEYS[7])
  redis.call('ZADD', KEYS[5], priority * 0x100000000 + counter % 0x100000000, ARGV[1])
end
if not held then
  redis.call('ZADD', KEYS[9], 0, '0')
end
redis.call('XADD', KEYS[8], '*', 'event', 'waiting', 'jobId', ARGV[1], 'prev', 'delayed')
redis.call('HSET', KEYS[10], 'delay', 0)
return 'promoted'
