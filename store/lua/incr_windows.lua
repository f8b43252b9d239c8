-- Adds deltas to windowed counter keys and gives any key without a TTL its window-aligned expiry,
-- exactly once per call however often the call is sent.
--
-- KEYS[1]      the sender's sequence key for this lane and slot (hash-tagged to the counters'
--              slot); unused when ARGV[1] is 0
-- KEYS[1+i]    counter key i, for i = 1..n (on Redis Cluster all in one hash slot)
-- ARGV[1]      the call's sequence number: 1, 2, 3... per sender lane and slot, with no gaps;
--              0 skips the sequence check
-- ARGV[2]      seconds the sequence key is kept from now; negative (the same seconds, negated)
--              when the sender refreshed the record's expiry recently and it need not be set again
-- ARGV[3]      the highest sequence number the sender has seen confirmed, in case the key is gone
-- ARGV[2+2i]   the integer delta for KEYS[1+i]
-- ARGV[3+2i]   unix milliseconds at which KEYS[1+i] expires: its window's end plus the retention
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
-- The commands are the cheapest for Redis that do the job: PEXPIREAT with milliseconds is
-- replicated as it is sent (EXPIREAT is rewritten first), and an INCR of the sequence record costs
-- half a SET ... GET.
--
-- A key keeps the TTL it has; only a key without one gets its window-aligned expiry. On Redis 7.0
-- and later that is PEXPIREAT ... NX after each INCRBY, which sets the expiry only where there is
-- none; before 7.0, a key INCRBY just created gets PEXPIREAT, and any other is asked its PTTL first.
local n = #KEYS - 1
local seq, keep, floor = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if not seq or seq < 0 or seq % 1 ~= 0 or not floor or (seq > 0 and (not keep or keep == 0 or keep % 1 ~= 0)) then
  return redis.error_reply('ERR incr_windows: bad sequence, record TTL or confirmed number')
end
-- KEYS, ARGV and the functions the loops call are read into locals once: a global is a table
-- look-up at every use, and these are used a few times a key.
local keys, argv = KEYS, ARGV
local type, call, rpcall = type, redis.call, redis.pcall
-- Each distinct argument is parsed once: a call's expiries are one or two values and its deltas
-- a few, and Lua interns strings, so a repeat is one table look-up where tonumber is a strtod.
-- Parsing every argument cost Redis about a tenth of the whole call.
local good = {}
for j = 4, 3 + 2 * n do
  local a = argv[j]
  if not good[a] then
    if not tonumber(a) then
      return redis.error_reply('ERR incr_windows: bad delta or expiry for ' .. keys[1 + math.floor((j - 2) / 2)])
    end
    good[a] = true
  end
end
-- undo puts the sequence record back as the INCR below found it (prev 0: there was none).
local function undo(prev)
  if prev > 0 then
    redis.call('SET', KEYS[1], prev, 'KEEPTTL')
  else
    redis.call('DEL', KEYS[1])
  end
end
if seq > 0 then
  -- Almost every call is the next in its sequence: count the record up and compare.
  local cur = redis.call('INCR', KEYS[1])
  local prev = cur - 1
  if cur ~= seq then
    local last = math.max(prev, floor)
    if seq ~= last + 1 then
      -- Put the record back as it was; a record this INCR created is removed again.
      undo(prev)
      if seq <= last then
        return 'DUPLICATE'
      end
      return 'GAP'
    end
  end
  -- Give the record its expiry: set again when the record was gone (expired or evicted, and the
  -- sender's confirmed floor says this call is the next one), when it was just created, or when
  -- the sender asks. A refusal here (an ACL without the command) would otherwise leave the record
  -- counted up for a call that adds nothing, and the sender would take it as applied: undo the
  -- INCR and fail the call whole.
  local e
  if cur ~= seq then
    e = redis.pcall('SET', KEYS[1], ARGV[1], 'PX', math.abs(keep) * 1000)
  elseif seq == 1 or keep > 0 then
    e = redis.pcall('PEXPIRE', KEYS[1], math.abs(keep) * 1000)
  end
  if type(e) == 'table' and e.err then
    undo(prev)
    return redis.error_reply(e.err)
  end
end
local nx = (redis.REDIS_VERSION_NUM or 0) >= 0x070000
local reply = {}
for i = 1, n do
  local key = keys[1 + i]
  local delta = argv[2 + 2 * i]
  local v = rpcall('INCRBY', key, delta)
  if type(v) == 'table' and v.err then
    reply[i] = v.err
  else
    reply[i] = v
    local e
    if nx then
      -- One command whatever the key's state: just created, holding its TTL, or having lost it
      -- (a leak: INCR after the key's TTL ran out, a PERSIST), which heals it now.
      e = rpcall('PEXPIREAT', key, argv[3 + 2 * i], 'NX')
    elseif v == tonumber(delta) or call('PTTL', key) == -1 then
      -- A value equal to the delta means the key was just created: it has no TTL, so skip
      -- asking. Otherwise PTTL -1 means the key lost its expiry: heal it now.
      e = rpcall('PEXPIREAT', key, argv[3 + 2 * i])
    end
    -- PEXPIREAT answers 1 or 0, and anything else is an error: two comparisons, where type()
    -- is a call into C.
    if e ~= 1 and e ~= 0 and e ~= nil then
      reply[i] = 'PEXPIREAT: ' .. e.err
    end
  end
end
return reply
