-- Does one chunk of BullMQ 5's Queue.clean(0, 0, state) (checked against bullmq 5.81.5, whose
-- cleanJobsInSet script, with its cleanSet, cleanList and removeJob, this makes the same moves
-- as) on the jobs hourglass read before, each only if it is still where it was read and its keys
-- are still the ones recorded:
--   each job:  a pending child of a flow's parent: its key out of the parent's dependencies
--              (SREM), as removeParentDependencyKey does while the parent waits for others;
--              its keys deleted (the hash and its logs, dependencies, processed, failed and
--              unsuccessful keys; its deduplication key de:<deid> and pending next job dn:<deid>
--              when de:<deid> names it); its id out of its set (ZREM) or list (LREM, from the
--              tail, where it is)
--   each state a job of the chunk was found in: XADD <events> * event cleaned count <removed>
--              (BullMQ's one event a call of cleanJobsInSet, untrimmed as BullMQ adds it)
-- Left, each with its flag: the jobs Queue.clean(0) leaves,
--   3 a job scheduler's next job (not in failed: cleanSet passes no scheduler set for it)
--   4 a job whose first of the state's timestamps is after now (failed: its score), as grace 0
-- and the ones hourglass leaves where clean would go on:
--   5 the last pending child of a flow's parent (BullMQ moves the parent on with it, to its
--     queue's wait, or deletes it in the same queue: hourglass does not)
--   6 a job whose keys are not the ones read before (what undoes the chunk was recorded from
--     that read)
--   7 a pending child whose parent's dependencies are in another hash slot on a cluster
-- A parent's dependencies only shrink, so a child read not pending stays so.
--
-- KEYS[1] meta   KEYS[2] events   KEYS[3] repeat (job schedulers)   KEYS[4..] the states' sets
-- and lists and the jobs' keys, as ARGV names them
-- ARGV[1] the queue's key prefix, "<prefix>:<queue>:"   ARGV[2] now, in ms
-- ARGV[3..] one group a job: state, index of its set or list, is a list (1, 0; 2: gone), id, its
--           parent's dependencies when it was read a pending child (their index; 0: none, -1:
--           another slot), n, and n indexes of the keys recorded to be deleted with it
--
-- Reply: one flag a job, 1 removed, 0 gone, 3 to 7 left; or the string "version" when the
-- queue's meta names no BullMQ 5, and nothing is written.
local rcall = redis.call
local version = rcall('HGET', KEYS[1], 'version')
if not version or string.sub(version, 1, 9) ~= 'bullmq:5.' then
  return 'version'
end
local prefix, now = ARGV[1], tonumber(ARGV[2])
local stamps = {
  failed = {}, delayed = {'processedOn', 'timestamp'}, prioritized = {'timestamp'},
  wait = {'finishedOn', 'processedOn', 'timestamp'}, paused = {'finishedOn', 'processedOn', 'timestamp'},
}

local function scheduled(id, job)
  local rjk = rcall('HGET', job, 'rjk')
  if not rjk then
    return false
  end
  local millis = rcall('ZSCORE', KEYS[3], rjk)
  return millis and id == 'repeat:' .. rjk .. ':' .. millis
end

local function later(state, job, score)
  if state == 'failed' then
    return tonumber(score) > now
  end
  local ts = rcall('HMGET', job, unpack(stamps[state]))
  for _, v in ipairs(ts) do
    if v then
      return tonumber(v) > now
    end
  end
  return false
end

-- the keys removeJob would delete that are there now, as a set of names
local function doomed(id, job)
  local out, n = {}, 0
  for _, suffix in ipairs({'', ':logs', ':dependencies', ':processed', ':failed', ':unsuccessful'}) do
    if rcall('EXISTS', job .. suffix) == 1 then
      out[job .. suffix], n = true, n + 1
    end
  end
  local deid = rcall('HGET', job, 'deid')
  if deid and rcall('GET', prefix .. 'de:' .. deid) == id then
    for _, k in ipairs({prefix .. 'de:' .. deid, prefix .. 'dn:' .. deid}) do
      if rcall('EXISTS', k) == 1 then
        out[k], n = true, n + 1
      end
    end
  end
  return out, n
end

local out, counts, order = {}, {}, {}
local i = 3
while i <= #ARGV do
  local state, container, isList, id, deps, n = ARGV[i], KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2] == '1',
    ARGV[i + 3], tonumber(ARGV[i + 4]), tonumber(ARGV[i + 5])
  local gone = ARGV[i + 2] == '2'
  local recorded = {}
  for k = 1, n do
    recorded[#recorded + 1] = KEYS[tonumber(ARGV[i + 5 + k])]
  end
  i = i + 6 + n
  local job = prefix .. id
  local score
  if gone then
    score = nil -- not found where the section lists it, read before: nothing recorded to undo
  elseif isList then
    score = rcall('LPOS', container, id, 'RANK', -1)
  else
    score = rcall('ZSCORE', container, id)
  end
  if score and not counts[state] then
    counts[state] = 0
    order[#order + 1] = state
  end
  if not score then
    out[#out + 1] = 0
  elseif state ~= 'failed' and scheduled(id, job) then
    out[#out + 1] = 3
  elseif later(state, job, score) then
    out[#out + 1] = 4
  elseif deps < 0 then
    out[#out + 1] = 7
  elseif deps > 0 and rcall('SISMEMBER', KEYS[deps], job) == 1 and rcall('SCARD', KEYS[deps]) <= 1 then
    out[#out + 1] = 5
  else
    local want, m = doomed(id, job)
    local same = m == #recorded
    for _, k in ipairs(recorded) do
      same = same and want[k] == true
    end
    if not same then
      out[#out + 1] = 6
    else
      if deps > 0 then
        rcall('SREM', KEYS[deps], job)
      end
      if #recorded > 0 then
        rcall('DEL', unpack(recorded))
      end
      if isList then
        rcall('LREM', container, -1, id)
      else
        rcall('ZREM', container, id)
      end
      counts[state] = counts[state] + 1
      out[#out + 1] = 1
    end
  end
end
for _, state in ipairs(order) do
  rcall('XADD', KEYS[2], '*', 'event', 'cleaned', 'count', counts[state])
end
return out
