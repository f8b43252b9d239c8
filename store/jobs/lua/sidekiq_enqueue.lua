-- Moves one job of Sidekiq's schedule, retry or dead set to its queue, as Sidekiq's
-- SortedEntry#add_to_queue and #retry do (the entry removed, then Sidekiq::Client#push: the
-- queue named in the queues set, the job pushed at the list's head), in one step: a job moved,
-- retried or deleted since the page was read is not there, and nothing is written.
--
-- KEYS[1]  the sorted set the job is in (schedule, retry or dead)
-- KEYS[2]  the queues set
-- KEYS[3]  the job's queue list, queue:<name>
-- ARGV[1]  the entry, exactly as stored
-- ARGV[2]  the job as pushed (with its enqueued_at, and retry_count counted back for a retry)
-- ARGV[3]  the queue's name
--
-- Reply: 1 moved, 0 the entry is gone.
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('LPUSH', KEYS[3], ARGV[2])
return 1
