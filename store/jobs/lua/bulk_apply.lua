-- Does one chunk of a bulk action on a sorted set's members in one step, each member only if it
-- is still in the set: a member taken, moved or deleted since its page was read is skipped (its
-- flag 0) and nothing is written for it. A member moved goes to a list as a job would be pushed
-- there (Sidekiq's SortedEntry#retry and #add_to_queue: SADD queues <name>, LPUSH queue:<name>).
--
-- KEYS[1]  the sorted set the members are in
-- KEYS[2]  the queues set, to name a moved member's queue in ("" key unused for a delete)
-- KEYS[3..] the lists members move to
-- ARGV[1]  "delete", "delete_keys", "rescore", "to_set" (see there) or "move"
-- ARGV[2..] delete: the members; delete_keys: each member, the count n of keys deleted with it,
--           and their n indexes in KEYS (a job's hash and sets, deleted when the member was
--           removed); rescore: triples member, new score, the largest score due now (a
--           member at or below it is due already and left, flag 0); move: quadruples member, job as pushed, index of its list in KEYS, queue
--           name
--
-- Reply: one flag a member, 1 done, 0 the member was gone.
local out = {}
if ARGV[1] == 'delete' then
  for i = 2, #ARGV do
    out[#out + 1] = redis.call('ZREM', KEYS[1], ARGV[i])
  end
  return out
end
if ARGV[1] == 'rescore' then
  for i = 2, #ARGV, 3 do
    local score = redis.call('ZSCORE', KEYS[1], ARGV[i])
    if score and tonumber(score) > tonumber(ARGV[i + 2]) then
      redis.call('ZADD', KEYS[1], 'XX', ARGV[i + 1], ARGV[i])
      out[#out + 1] = 1
    else
      out[#out + 1] = 0
    end
  end
  return out
end
if ARGV[1] == 'to_set' then
  -- KEYS[2] the set the members go to, each with its score, then trimmed: to ARGV[2] by
  -- score, and to its newest ARGV[3] - 1 by rank (Sidekiq's DeadSet#kill)
  for i = 4, #ARGV, 2 do
    if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
      redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i])
      out[#out + 1] = 1
    else
      out[#out + 1] = 0
    end
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[2])
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[3]))
  return out
end
if ARGV[1] == 'delete_keys' then
  local i = 2
  while i <= #ARGV do
    local n = tonumber(ARGV[i + 1])
    local removed = redis.call('ZREM', KEYS[1], ARGV[i])
    if removed == 1 then
      for k = 1, n do
        redis.call('DEL', KEYS[tonumber(ARGV[i + 1 + k])])
      end
    end
    out[#out + 1] = removed
    i = i + 2 + n
  end
  return out
end
for i = 2, #ARGV, 4 do
  if redis.call('ZREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('SADD', KEYS[2], ARGV[i + 3])
    redis.call('LPUSH', KEYS[tonumber(ARGV[i + 2])], ARGV[i + 1])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
