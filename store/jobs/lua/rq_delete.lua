-- Deletes one RQ job as RQ's Job.delete does, in one step, only if the job is still in the list
-- or registry the page showed: its id leaves its queue (one LREM 1 in all) and the registry its
-- status names (finished, deferred, started, scheduled, failed or stopped, canceled), and its
-- hash, its dependents set and its dependencies set are deleted. The id also leaves the list or
-- registry the page showed, whatever the status says; an id whose hash is gone (RQ cannot fetch
-- it) only leaves that.
--
-- KEYS[1]      the list or registry the page showed the job in
-- KEYS[2]      the queue, rq:queue:<q>
-- KEYS[3]      the job's hash, rq:job:<id>
-- KEYS[4]      its dependents set; KEYS[5] its dependencies set
-- KEYS[6..11]  the registries: rq:finished, rq:deferred, rq:wip, rq:scheduled, rq:failed,
--              rq:canceled (each :<q>)
-- ARGV[1]      the job's id
-- ARGV[2]      "list" when KEYS[1] is the queue, "zset" when it is a registry
--
-- Reply: "deleted", "orphan" (the id removed, its hash was gone already), or "gone" (the id is
-- not in KEYS[1]: nothing written).
local removed
if ARGV[2] == 'list' then
  removed = redis.call('LREM', KEYS[1], 1, ARGV[1])
else
  removed = redis.call('ZREM', KEYS[1], ARGV[1])
end
if removed == 0 then
  return 'gone'
end
if redis.call('EXISTS', KEYS[3]) == 0 then
  return 'orphan'
end
if ARGV[2] ~= 'list' then
  redis.call('LREM', KEYS[2], 1, ARGV[1])
end
local registry = ({finished = 6, deferred = 7, started = 8, scheduled = 9, failed = 10, stopped = 10,
  canceled = 11})[redis.call('HGET', KEYS[3], 'status')]
if registry then
  redis.call('ZREM', KEYS[registry], ARGV[1])
end
redis.call('DEL', KEYS[3], KEYS[4], KEYS[5])
return 'deleted'
