-- Pauses or resumes a BullMQ queue, as BullMQ 5's Queue.pause() and Queue.resume() do (its pause
-- script, checked against bullmq 5.81.5), only if the queue's meta names BullMQ 5:
--   the source list (wait when pausing, paused when resuming) is RENAMEd onto the other when it
--   exists; pausing sets meta's "paused" to 1 and deletes the marker; resuming deletes "paused"
--   and adds the marker "0" (score 0) when jobs wait or are prioritized, else the next delayed
--   job's marker "1" scored by its timestamp; the event stream gets "paused" or "resumed".
-- BullMQ writes the same again when the queue is in that state already, and so does this.
--
-- KEYS[1] the source list (wait or paused)  KEYS[2] the other (paused or wait)
-- KEYS[3] meta  KEYS[4] prioritized  KEYS[5] events  KEYS[6] delayed  KEYS[7] marker
-- ARGV[1] "paused" or "resumed"
--
-- Reply: "paused" or "resumed", with ":already" when the queue was in that state before; or
-- "version" (the queue's meta names no BullMQ 5), and nothing is written.
local rcall = redis.call
local version = rcall('HGET', KEYS[3], 'version')
if not version or string.sub(version, 1, 9) ~= 'bullmq:5.' then
  return 'version'
end
local was = rcall('HEXISTS', KEYS[3], 'paused') == 1
local markerKey = KEYS[7]
local hasJobs = rcall('EXISTS', KEYS[1]) == 1
if hasJobs then rcall('RENAME', KEYS[1], KEYS[2]) end

if ARGV[1] == 'paused' then
  rcall('HSET', KEYS[3], 'paused', 1)
  rcall('DEL', markerKey)
else
  rcall('HDEL', KEYS[3], 'paused')
  if hasJobs or rcall('ZCARD', KEYS[4]) > 0 then
    rcall('ZADD', markerKey, 0, '0')
  else
    local result = rcall('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
    local nextTimestamp = tonumber(result[2])
    if nextTimestamp ~= nil then
      rcall('ZADD', markerKey, nextTimestamp / 0x1000, '1')
    end
  end
end

rcall('XADD', KEYS[5], '*', 'event', ARGV[1])
if was == (ARGV[1] == 'paused') then
  return ARGV[1] .. ':already'
end
return ARGV[1]
