-- Reads the next window of a bulk action on a list (bulk_list.go): the elements at the end the
-- library's workers take from that were there at the dry run, and no element pushed since.
--
-- The dry run noted the list's newest elements (the marks, at the end its producers push to).
-- Producers push only at that far end, so the first mark met from the far end bounds the dry
-- run's elements: it and everything from it to the taking end were there then (or were taken
-- and pushed back onto the taking end, as a shutdown's requeue does); everything before it was
-- pushed since. The marks are looked for from the far index where the last window found one
-- (less 16, for a few elements removed since between), a page at a time; once every mark is
-- gone, so are all of the dry run's elements, taken by the workers.
--
-- KEYS[1]  the list
-- ARGV[1]  "left" or "right": the end the workers take from
-- ARGV[2]  skip: the elements at the taking end to pass (left as they were by earlier chunks)
-- ARGV[3]  n: the most elements to read
-- ARGV[4]  hint: the far index (0 at the far end) where the last window found a mark
-- ARGV[5..] the marks, the dry run's newest elements
--
-- Reply: {"found", far index of the first mark, elements in the order the workers take them}
-- (the elements end at the mark when it is within skip + n), {"more", far index to look from
-- next} when the page held no mark and the list goes on, or {"gone"}.
local list, left = KEYS[1], ARGV[1] == 'left'
local skip, n, hint = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local marks = {}
for i = 5, #ARGV do
  marks[ARGV[i]] = true
end
local len = redis.call('LLEN', list)
local page = 1024

-- far reads the far indexes a..b (from the far end inward).
local function far(a, b)
  if left then
    local r = redis.call('LRANGE', list, -(b + 1), -(a + 1))
    local out = {}
    for j = #r, 1, -1 do
      out[#out + 1] = r[j]
    end
    return out
  end
  return redis.call('LRANGE', list, a, b)
end

local from = math.max(hint - 16, 0)
if from >= len then
  return { 'gone' }
end
local at
local pos, size = from, 32 -- a few first: the mark is mostly where it was
while not at and pos < from + page and pos < len do
  for j, e in ipairs(far(pos, pos + size - 1)) do
    if marks[e] then
      at = pos + j - 1
      break
    end
  end
  pos, size = pos + size, page - size
end
if not at then
  if from + page < len then
    return { 'more', from + page }
  end
  return { 'gone' }
end

-- The dry run's elements still in the list: the taking end's len - at.
local upto = math.min(skip + n, len - at) - 1
local els = {}
if upto >= skip then
  if left then
    els = redis.call('LRANGE', list, skip, upto)
  else
    local r = redis.call('LRANGE', list, -(upto + 1), -(skip + 1))
    for j = #r, 1, -1 do
      els[#els + 1] = r[j]
    end
  end
end
return { 'found', at, els }
