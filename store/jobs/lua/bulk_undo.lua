-- Undoes one chunk of a bulk action from what was recorded before it ran, each task checked
-- against what is there now, so an undo run twice, or run over a chunk that never ran, writes
-- nothing more.
--
-- KEYS     the keys the tasks name (sets, lists, whole keys), each once
-- ARGV     one group a task, by kind:
--            "z", set index, member, score: a deleted member; ZADD it back unless it is there
--            "m", set index, member, score, list index, job as pushed: a moved member; the job
--                 leaves the list (LREM 1) and the member goes back, only if the job is still
--                 in the list (a worker that took it has run it: nothing is undone)
--            "r", set index, member, old score, new score: a member made due now; its old score
--                 back, only if it still has the new one (gone: claimed since, and run)
--            "k", key index, DUMP, absolute expiry in ms (0 none): a deleted key; RESTORE it
--                 when absent (not when its expiry has passed); when present, left as it is
--            "l" or "s", set index, member, score, destination index, hash index (0: none), old state,
--                 new state: a task moved from one state to another (asynq's), to a list ("l",
--                 pending) or a set ("s", archived); it leaves the destination and goes back
--                 to the set, its hash's state back to the old one, only if the destination
--                 still holds it (a worker that took it from pending has run it: code 2), or,
--                 for a set, its hash still says the new state (the set's trim took it)
--            "q", set index, member, score, list index, n, and n triples key index, DUMP ("" for
--                 a key that was absent), absolute expiry in ms: a job requeued (RQ's); it
--                 leaves the list and goes back to the set, and its keys are put back as they
--                 were (RESTORE REPLACE; DEL when absent before), only if it is still queued
--            "e", list index, element, rank, scan, destination index (0: none), hash index (0: none),
--                 new state, n, and n triples key index, DUMP ("" for a key that was absent),
--                 absolute expiry in ms: an element deleted or archived from a list
--                 (bulk_list.lua). It is there already when the list holds it |rank| times
--                 within scan elements of the taking end (LPOS; rank < 0 counts from the tail,
--                 which the workers take from, > 0 from the head; scan 0: not looked for). Else, for an archive, it
--                 leaves the destination set (or the set's trim took it, its hash still saying the
--                 new state), else code 2; then its keys come back as they were (a delete's:
--                 RESTORE when absent and not expired; an archive's hash: RESTORE REPLACE, DEL
--                 when absent before), and it is pushed back at the taking end (RPUSH for a rank
--                 < 0, LPUSH otherwise), where the workers take it next
--            "a", set index, member: a member removed from a set; SADD it back unless it is there
--            "c", set or list index, member, score (in a list: its place from the tail), is a list
--                 (1 or 0), n, and n triples key index, DUMP, absolute expiry in ms: a job
--                 deleted with its keys (BullMQ's clean); its keys RESTOREd and the member back
--                 in its set, or in its list with as many after it as it had, only if none of
--                 its keys is there (there: 0 when it is the job as it was, in its set or, in
--                 a list, its first key's DUMP the same; else 3); a key whose expiry has passed
--                 is not restored, and when that is the first (the job's hash), nothing is (4)
--            "p", set index, member, DUMP, absolute expiry in ms, size: a pending child's key taken
--                 from its flow's parent's dependencies (BullMQ's clean); SADD back, and once the
--                 set has its size again (it only shrinks otherwise), RESTORE REPLACE its DUMP;
--                 not when the set is gone (the flow moved on: 2)
--
-- Reply: one code a task, 1 restored, 0 there already (or the chunk never ran), 2 the moved job
-- was taken from its list already (or the task made due was claimed), 3 the key is there holding something else, 4 its expiry
-- passed.
local out = {}
local i = 1
while i <= #ARGV do
  local kind = ARGV[i]
  if kind == 'z' then
    local set = KEYS[tonumber(ARGV[i + 1])]
    if redis.call('ZSCORE', set, ARGV[i + 2]) then
      out[#out + 1] = 0
    else
      redis.call('ZADD', set, ARGV[i + 3], ARGV[i + 2])
      out[#out + 1] = 1
    end
    i = i + 4
  elseif kind == 'r' then
    local score = redis.call('ZSCORE', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2])
    if not score then
      out[#out + 1] = 2
    elseif tonumber(score) == tonumber(ARGV[i + 4]) then
      redis.call('ZADD', KEYS[tonumber(ARGV[i + 1])], 'XX', ARGV[i + 3], ARGV[i + 2])
      out[#out + 1] = 1
    else
      out[#out + 1] = 0
    end
    i = i + 5
  elseif kind == 'l' or kind == 's' then
    local set, dest, hash = KEYS[tonumber(ARGV[i + 1])], KEYS[tonumber(ARGV[i + 4])], KEYS[tonumber(ARGV[i + 5])]
    -- hash index 0: the task has no hash (a Sidekiq job killed is its own member), hash is nil
    local left
    if redis.call('ZSCORE', set, ARGV[i + 2]) then
      out[#out + 1] = 0
    else
      if kind == 'l' then
        left = redis.call('LREM', dest, 1, ARGV[i + 2])
      else
        -- out of the set already, its hash still saying so: the set's trim took it (asynq's
        -- archive), and it goes back all the same
        left = redis.call('ZREM', dest, ARGV[i + 2])
        if left == 0 and hash and redis.call('HGET', hash, 'state') == ARGV[i + 7] then
          left = 1
        end
      end
      if left == 1 then
        redis.call('ZADD', set, ARGV[i + 3], ARGV[i + 2])
        if hash and redis.call('HGET', hash, 'state') == ARGV[i + 7] then
          redis.call('HSET', hash, 'state', ARGV[i + 6])
        end
        out[#out + 1] = 1
      else
        out[#out + 1] = 2
      end
    end
    i = i + 8
  elseif kind == 'q' then
    local set, n = KEYS[tonumber(ARGV[i + 1])], tonumber(ARGV[i + 5])
    if redis.call('ZSCORE', set, ARGV[i + 2]) then
      out[#out + 1] = 0
    elseif redis.call('LREM', KEYS[tonumber(ARGV[i + 4])], 1, ARGV[i + 2]) == 1 then
      redis.call('ZADD', set, ARGV[i + 3], ARGV[i + 2])
      for k = 0, n - 1 do
        local key, dump, at = KEYS[tonumber(ARGV[i + 6 + k * 3])], ARGV[i + 7 + k * 3], tonumber(ARGV[i + 8 + k * 3])
        if dump == '' then
          redis.call('DEL', key)
        else
          redis.call('RESTORE', key, at, dump, 'ABSTTL', 'REPLACE')
        end
      end
      out[#out + 1] = 1
    else
      out[#out + 1] = 2
    end
    i = i + 6 + n * 3
  elseif kind == 'e' then
    local list, el, rank = KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], tonumber(ARGV[i + 3])
    local dest, hash, n = tonumber(ARGV[i + 5]), tonumber(ARGV[i + 6]), tonumber(ARGV[i + 8])
    local scan = tonumber(ARGV[i + 4])
    if scan > 0 and redis.call('LPOS', list, el, 'RANK', rank, 'MAXLEN', scan) then
      out[#out + 1] = 0
    else
      local back = true
      if dest > 0 then
        back = redis.call('ZREM', KEYS[dest], el) == 1 or (hash > 0 and redis.call('HGET', KEYS[hash], 'state') == ARGV[i + 7])
      end
      if back then
        local t = redis.call('TIME')
        local nowms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
        for k = 0, n - 1 do
          local key, dump, at = KEYS[tonumber(ARGV[i + 9 + k * 3])], ARGV[i + 10 + k * 3], tonumber(ARGV[i + 11 + k * 3])
          if dest > 0 and dump == '' then
            redis.call('DEL', key)
          elseif dest > 0 then
            redis.call('RESTORE', key, at, dump, 'ABSTTL', 'REPLACE')
          elseif dump ~= '' and redis.call('EXISTS', key) == 0 and (at == 0 or at > nowms) then
            redis.call('RESTORE', key, at, dump, 'ABSTTL')
          end
        end
        if rank < 0 then
          redis.call('RPUSH', list, el)
        else
          redis.call('LPUSH', list, el)
        end
        out[#out + 1] = 1
      else
        out[#out + 1] = 2
      end
    end
    i = i + 9 + n * 3
  elseif kind == 'a' then
    out[#out + 1] = redis.call('SADD', KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2])
    i = i + 3
  elseif kind == 'p' then
    local set, member = KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2]
    if redis.call('SISMEMBER', set, member) == 1 then
      out[#out + 1] = 0
    elseif redis.call('EXISTS', set) == 0 then
      out[#out + 1] = 2
    else
      redis.call('SADD', set, member)
      if redis.call('SCARD', set) == tonumber(ARGV[i + 5]) then
        redis.call('RESTORE', set, ARGV[i + 4], ARGV[i + 3], 'ABSTTL', 'REPLACE')
      end
      out[#out + 1] = 1
    end
    i = i + 6
  elseif kind == 'c' then
    local container, member, score, isList, n = KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3],
      ARGV[i + 4] == '1', tonumber(ARGV[i + 5])
    local t = redis.call('TIME')
    local nowms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local there, expired = false, {}
    for k = 0, n - 1 do
      local at = tonumber(ARGV[i + 8 + k * 3])
      there = there or redis.call('EXISTS', KEYS[tonumber(ARGV[i + 6 + k * 3])]) == 1
      expired[k] = at > 0 and at <= nowms
    end
    local inSet
    if isList then
      inSet = n == 0 and redis.call('LPOS', container, member) -- a job with no keys: its id is all
    else
      inSet = redis.call('ZSCORE', container, member)
    end
    if there then
      if inSet or (isList and redis.call('DUMP', KEYS[tonumber(ARGV[i + 6])]) == ARGV[i + 7]) then
        out[#out + 1] = 0
      else
        out[#out + 1] = 3
      end
    elseif inSet then
      out[#out + 1] = 0
    elseif expired[0] then
      out[#out + 1] = 4 -- its first key (the job's hash) would have expired by now
    else
      for k = 0, n - 1 do
        if not expired[k] then -- one whose expiry has passed (a deduplication key's) stays gone
          redis.call('RESTORE', KEYS[tonumber(ARGV[i + 6 + k * 3])], ARGV[i + 8 + k * 3], ARGV[i + 7 + k * 3], 'ABSTTL')
        end
      end
      if isList then
        local p, len = tonumber(score), redis.call('LLEN', container)
        if p <= 0 then
          redis.call('RPUSH', container, member)
        elseif p >= len then
          redis.call('LPUSH', container, member)
        else
          redis.call('LINSERT', container, 'BEFORE', redis.call('LINDEX', container, -p), member)
        end
      else
        redis.call('ZADD', container, score, member)
      end
      out[#out + 1] = 1
    end
    i = i + 6 + n * 3
  elseif kind == 'm' then
    local set = KEYS[tonumber(ARGV[i + 1])]
    if redis.call('ZSCORE', set, ARGV[i + 2]) then
      out[#out + 1] = 0
    elseif redis.call('LREM', KEYS[tonumber(ARGV[i + 4])], 1, ARGV[i + 5]) == 1 then
      redis.call('ZADD', set, ARGV[i + 3], ARGV[i + 2])
      out[#out + 1] = 1
    else
      out[#out + 1] = 2
    end
    i = i + 6
  else
    local key = KEYS[tonumber(ARGV[i + 1])]
    local at = tonumber(ARGV[i + 3])
    if redis.call('EXISTS', key) == 1 then
      if redis.call('DUMP', key) == ARGV[i + 2] then
        out[#out + 1] = 0
      else
        out[#out + 1] = 3
      end
    else
      local t = redis.call('TIME')
      local nowms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
      if at > 0 and at <= nowms then
        out[#out + 1] = 4
      else
        redis.call('RESTORE', key, at, ARGV[i + 2], 'ABSTTL')
        out[#out + 1] = 1
      end
    end
    i = i + 4
  end
end
return out
