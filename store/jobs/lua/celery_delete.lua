-- Deletes one waiting message of a Celery queue: one occurrence of it leaves the first of the
-- queue's lists (its priority lists) that holds it.
--
-- KEYS[1..n]  the queue's lists: the queue's own, then one per priority step
-- ARGV[1]     the message, exactly as stored
--
-- Reply: the index in KEYS of the list it left; 0 when no list held it.
for i = 1, #KEYS do
  if redis.call('LREM', KEYS[i], 1, ARGV[1]) > 0 then
    return i
  end
end
return 0
