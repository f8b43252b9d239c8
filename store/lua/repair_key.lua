-- Gives one counter key its window-aligned expiry, or deletes it, only if it is still what the
-- sweep found: a string holding a 64-bit integer, with no TTL. A key changed between the sweep
-- and the repair (given a TTL, rewritten with text, replaced by another type, deleted) is left as
-- it now is, and the reply says why.
--
-- KEYS[1]  the counter key
-- ARGV[1]  "expire" or "delete"
-- ARGV[2]  for "expire": the instant to expire at, in Unix seconds
--
-- Reply: "expired" or "deleted"; or why the key was left: "gone", "has_ttl", "wrong_type",
-- "not_integer".

-- is_int64 accepts what INCRBY writes and the sweep reads as a count: an optional minus, then
-- digits without a leading zero (or "0" alone), within the signed 64-bit range.
local function is_int64(s)
  if #s == 0 or #s > 20 then
    return false
  end
  local neg = string.sub(s, 1, 1) == '-'
  local digits = s
  if neg then
    digits = string.sub(s, 2)
  end
  if digits == '0' then
    return not neg
  end
  if not string.match(digits, '^[1-9][0-9]*$') then
    return false
  end
  if #digits ~= 19 then
    return #digits < 19
  end
  if neg then
    return digits <= '9223372036854775808'
  end
  return digits <= '9223372036854775807'
end

local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'none' then
  return 'gone'
end
if kind ~= 'string' then
  return 'wrong_type'
end
if redis.call('PTTL', KEYS[1]) ~= -1 then
  return 'has_ttl'
end
if not is_int64(redis.call('GET', KEYS[1])) then
  return 'not_integer'
end
if ARGV[1] == 'delete' then
  redis.call('DEL', KEYS[1])
  return 'deleted'
end
redis.call('EXPIREAT', KEYS[1], ARGV[2])
return 'expired'
