-- Does one chunk of a bulk action on a list (bulk_list.go): the elements read from the end the
-- library's workers take from, in the order they take them, acted on only where they still are.
-- Workers may have taken some since (from that end: they are gone, flag 0), producers pushed
-- more at the other end, and a few elements may have been pushed back onto the taking end (a
-- shutdown's requeue): the elements still there must be the last of those read, together, at
-- most 16 elements from the taking end, behind none of those read. Then those elements leave the list (the ones pushed back
-- before them stay where they were) and each is deleted or archived as the library does it; else
-- the list changed among them and nothing is done (flag 2).
--
-- KEYS[1]  the list
-- KEYS[2]  archive: the archived set; else the set the queue is named in (Sidekiq's queues) or the
--          list again
-- KEYS[3..] the keys the elements name
-- ARGV[1]  "delete" or "archive"
-- ARGV[2]  "left" or "right": the end the workers take from
-- ARGV[3]  the queue's name in KEYS[2], SREMed once the list is empty ("" for none)
-- ARGV[4]  archive: now in Unix seconds (the score); ARGV[5] the cutoff (now less asynq's 90
--          days); ARGV[6] asynq's largest archive (10000)
-- ARGV[7..] per element, in the order the workers take them: the element, the count n of keys,
--          and their n indexes in KEYS; delete: the keys deleted with it (RQ's job hash and
--          dependents set, asynq's task hash); archive: the task's hash, its state made archived
--
-- Reply: one flag an element, 1 done, 0 gone, 2 left as it is.
local list, left = KEYS[1], ARGV[2] == 'left'
local els, ks = {}, {}
local i = 7
while i <= #ARGV do
  local n, k = tonumber(ARGV[i + 1]), {}
  for j = 1, n do
    k[j] = KEYS[tonumber(ARGV[i + 1 + j])]
  end
  els[#els + 1], ks[#ks + 1] = ARGV[i], k
  i = i + 2 + n
end
local n = #els
local span = math.min(redis.call('LLEN', list), n + 16)
local w = {}
if span > 0 then
  if left then
    w = redis.call('LRANGE', list, 0, span - 1)
  else
    local r = redis.call('LRANGE', list, -span, -1)
    for j = #r, 1, -1 do
      w[#w + 1] = r[j]
    end
  end
end
local at = {}
for j = 1, n do
  local p = at[els[j]] or {}
  p[#p + 1] = j
  at[els[j]] = p
end
-- d: elements pushed back onto the taking end since; s: the first element still there
local fd, fs
for d = 0, math.min(16, span - 1) do
  if d > 0 and at[w[d]] then
    break -- an element read is not taken for one pushed back since
  end
  for _, s in ipairs(at[w[d + 1]] or {}) do
    local m = n - s + 1
    if d + m <= span then
      local ok = true
      for j = 0, m - 1 do
        if w[d + 1 + j] ~= els[s + j] then
          ok = false
          break
        end
      end
      if ok then
        fd, fs = d, s
        break
      end
    end
  end
  if fd then
    break
  end
end
local out = {}
if not fd then
  local flag = 0
  for j = 1, span do
    if at[w[j]] then
      flag = 2
    end
  end
  for j = 1, n do
    out[j] = flag
  end
  return out
end
local m = n - fs + 1
if left then
  redis.call('LPOP', list, fd + m)
  for j = fd, 1, -1 do
    redis.call('LPUSH', list, w[j])
  end
else
  redis.call('RPOP', list, fd + m)
  for j = fd, 1, -1 do
    redis.call('RPUSH', list, w[j])
  end
end
for j = 1, n do
  if j < fs then
    out[j] = 0
  else
    if ARGV[1] == 'archive' then
      redis.call('ZADD', KEYS[2], ARGV[4], els[j])
      redis.call('HSET', ks[j][1], 'state', 'archived')
    else
      for _, k in ipairs(ks[j]) do
        redis.call('DEL', k)
      end
    end
    out[j] = 1
  end
end
if ARGV[1] == 'archive' then
  redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -tonumber(ARGV[6]))
elseif ARGV[3] ~= '' and redis.call('LLEN', list) == 0 then
  redis.call('SREM', KEYS[2], ARGV[3])
end
return out
