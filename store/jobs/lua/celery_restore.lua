-- Puts one message a worker took and has not acknowledged back on its queues, as kombu's
-- restore_by_tag does (the delivery's records removed from unacked and unacked_index, the message
-- RPUSHed onto each queue its exchange routes it to, where the next BRPOP takes it), only if the
-- delivery is still unacknowledged and unchanged: one acknowledged or restored since the page
-- was read is not there, and nothing is written.
--
-- KEYS[1]     the unacked hash: delivery tag -> JSON [message, exchange, routing key]
-- KEYS[2]     the unacked_index sorted set
-- KEYS[3..n]  the lists of the queues the message goes to
-- ARGV[1]     the delivery tag
-- ARGV[2]     the unacked record as it was read
-- ARGV[3]     the message to push (marked redelivered, as kombu marks it)
--
-- Reply: how many queues the message was pushed to; 0 when the record is gone or changed.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
  return 0
end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[1], ARGV[1])
for i = 3, #KEYS do
  redis.call('RPUSH', KEYS[i], ARGV[3])
end
return #KEYS - 2
