-- Adds deltas to windowed counter keys and gives any key without a TTL its window-aligned expiry,
-- exactly once per call however often the call is sent.
--
-- KEYS[1]      the sender's sequence key for this lane and slot (hash-tagged to the counters'
--              slot); unused when ARGV[1] is 0
-- KEYS[1+i]    counter key i, for i = 1..n (on Redis Cluster all in one hash slot)
-- ARGV[1]      the call's sequence number: 1, 2, 3... per sender lane and slot, with no gaps;
--              0 skips the sequence check
-- ARGV[2]      seconds the sequence key is kept
-- ARGV[3]      the highest sequence number the sender has seen confirmed, in case the key is gone
-- ARGV[2+2i]   the integer delta for KEYS[1+i]
-- ARGV[3+2i]   unix seconds at which KEYS[1+i] expires: its window's end plus the retention
--
-- Reply:
--   "DUPLICATE"  this sequence number was applied before (its reply was lost): nothing is added
--   "GAP"        an earlier call of the sequence has not been applied yet: nothing is added, and
--                the sender must send the earlier call first
--   an array with one element per counter key: its new value as an integer, or, when that key
--   could not be written (wrong type, not an integer, overflow), the error text as a string.
--
-- Every argument is checked before the first write, and every write after the sequence record
-- runs under pcall, so a call is applied whole or not at all and a bad key never stops the others.
local n = #KEYS - 1
for i = 1, n do
  if not tonumber(ARGV[2 + 2 * i]) or not tonumber(ARGV[3 + 2 * i]) then
    return redis.error_reply('ERR incr_windows: bad delta or expiry for ' .. KEYS[1 + i])
  end
end
local seq = tonumber(ARGV[1])
if seq > 0 then
  -- Record this call's number and read the one before in one command: almost every call is the
  -- next in its sequence, so the record rarely has to be put back.
  local prev = redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'GET')
  local last = math.max(tonumber(prev) or 0, tonumber(ARGV[3]) or 0)
  if seq ~= last + 1 then
    if prev then
      redis.call('SET', KEYS[1], prev, 'EX', ARGV[2])
    else
      redis.call('DEL', KEYS[1])
    end
    if seq <= last then
      return 'DUPLICATE'
    end
    return 'GAP'
  end
end
local reply = {}
for i = 1, n do
  local key = KEYS[1 + i]
  local delta = ARGV[2 + 2 * i]
  local v = redis.pcall('INCRBY', key, delta)
  if type(v) == 'table' and v.err then
    reply[i] = v.err
  else
    reply[i] = v
    -- A value equal to the delta means the key was just created: it has no TTL, so skip asking.
    -- Otherwise TTL -1 means the key lost its expiry (seed 003's leak): heal it now. Setting the
    -- same window-aligned instant again, as for a key that had counted down to 0, is harmless.
    if v == tonumber(delta) or redis.call('TTL', key) == -1 then
      local e = redis.pcall('EXPIREAT', key, ARGV[3 + 2 * i])
      if type(e) == 'table' and e.err then
        reply[i] = 'EXPIREAT: ' .. e.err
      end
    end
  end
end
return reply
