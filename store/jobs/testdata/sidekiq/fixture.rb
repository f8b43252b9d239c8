# Fills a redis-server the way Sidekiq 6.4 itself does, then prints, as one JSON object, what
# Sidekiq's own API (Sidekiq::Stats, Sidekiq::Queue, Sidekiq::ScheduledSet) counts there.
#
#   ruby fixture.rb redis://127.0.0.1:6379/0 [namespace]
#
# What it leaves in Redis (keys under "<namespace>:" when one is given, with redis-namespace):
#   queues                  set    the queue names
#   queue:<name>            list   jobs waiting (Client.push LPUSHes, a fetcher BRPOPs)
#   schedule                zset   jobs due later, scored by due time (float seconds)
#   retry                   zset   failed jobs to run again, scored by retry time (float seconds)
#   dead                    zset   jobs failed for good, scored by when they died (float seconds)
#   processes               set    the identities of running Sidekiq processes
#   <identity>              hash   a process's heartbeat: busy, beat, info, quiet, rss, rtt_us
#   <identity>:workers      hash   thread id -> the job it runs ({queue, payload, run_at})
#   stat:processed|failed   string counters (and stat:<name>:<yyyy-mm-dd> per day)
# Logs go to stderr; stdout holds the JSON alone.
require "json"
require "sidekiq"
require "sidekiq/api"
require "sidekiq/launcher"

url, namespace = ARGV
Sidekiq.logger = Logger.new($stderr, level: Logger::ERROR)
Redis.silence_deprecations = true
config = {url: url}
config[:namespace] = namespace if namespace && !namespace.empty?
Sidekiq.redis = config

# Jobs a real Sidekiq process runs below, in this process.
HOLD = Thread::Queue.new
class Hold # keeps a processor busy until the fixture exits
  include Sidekiq::Worker
  def perform = HOLD.pop
end

class Flaky # fails: Sidekiq puts it in the retry set (retry: 3) or straight in the dead set (retry: 0)
  include Sidekiq::Worker
  def perform(*) = raise("flaky")
end

class Mailer
  include Sidekiq::Worker
  sidekiq_options queue: "mail"
  def perform(*) = nil
end

# Waiting: three jobs in default, two in mail.
3.times { |i| Sidekiq::Client.push("class" => "Report", "queue" => "default", "args" => [i]) }
2.times { |i| Mailer.perform_async("user-#{i}") }

# Scheduled, due times with a fraction of a second. perform_in/perform_at enqueue at once a job
# whose time has passed, so the one already due is pushed with its "at" as the poller would find
# it: due, not yet moved to its queue.
now = Time.now.to_f
Sidekiq::Client.push("class" => "Mailer", "queue" => "mail", "args" => ["late"], "at" => now - 5.3)
Mailer.perform_in(0.4, "soon")
Mailer.perform_at(now + 2.7, "in-a-moment")
Mailer.perform_in(90, "later")
Mailer.perform_in(2 * 3600, "much-later")

# A Sidekiq process, run here, takes the work queue: one job it keeps running, one that fails
# into the retry set, one that fails into the dead set. Its scheduler first polls after at least
# ten seconds, long after this fixture has printed, so the scheduled jobs stay where they are.
Sidekiq::Client.push("class" => "Hold", "queue" => "work", "args" => [])
Sidekiq::Client.push("class" => "Flaky", "queue" => "work", "args" => ["again"], "retry" => 3)
Sidekiq::Client.push("class" => "Flaky", "queue" => "work", "args" => ["never"], "retry" => 0)
Sidekiq.options[:queues] = ["work"]
Sidekiq.options[:concurrency] = 2
launcher = Sidekiq::Launcher.new(Sidekiq.options)
launcher.run
deadline = Time.now + 20
until Sidekiq::RetrySet.new.size == 1 && Sidekiq::DeadSet.new.size == 1 &&
    Sidekiq::Processor::WORKER_STATE.size == 1
  raise "the Sidekiq process did not run its jobs" if Time.now > deadline
  sleep 0.05
end
launcher.send(:heartbeat) # the process's heartbeat, as it beats every 5 s: busy = 1

# A job killed by hand, as the Web UI's "Kill" does.
Sidekiq::DeadSet.new.kill(Sidekiq.dump_json("class" => "Mailer", "queue" => "mail", "args" => ["bounced"], "jid" => "killedbyhand0001"), notify_failure: false)

stats = Sidekiq::Stats.new
names = Sidekiq::Queue.all.map(&:name)
at = Time.now
out = {
  now: at.to_f,
  stats: {
    enqueued: stats.enqueued, scheduled_size: stats.scheduled_size, retry_size: stats.retry_size,
    dead_size: stats.dead_size, processes_size: stats.processes_size, workers_size: stats.workers_size,
    processed: stats.processed, failed: stats.failed
  },
  queues: stats.queues,
  sizes: names.to_h { |n| [n, Sidekiq::Queue.new(n).size] },
  # Queue#latency, in seconds, read right after now.
  latencies: names.to_h { |n| [n, Sidekiq::Queue.new(n).latency] },
  scheduled_due: Sidekiq::ScheduledSet.new.count { |e| e.at <= at },
  scheduled_due_in_5s: Sidekiq::ScheduledSet.new.count { |e| e.at <= at + 5 },
  process: Sidekiq::ProcessSet.new(false).map(&:identity).first,
  # Each queue's jids as Sidekiq::Queue lists them (newest first), and each set's [jid, score,
  # enqueued_at or created_at] as the set lists them (highest score first).
  jobs: {
    queues: names.to_h { |n| [n, Sidekiq::Queue.new(n).map(&:jid)] },
    schedule: Sidekiq::ScheduledSet.new.map { |e| [e.jid, e.score, e.item["enqueued_at"] || e.item["created_at"]] },
    retry: Sidekiq::RetrySet.new.map { |e| [e.jid, e.score, e.item["enqueued_at"] || e.item["created_at"]] },
    dead: Sidekiq::DeadSet.new.map { |e| [e.jid, e.score, e.item["enqueued_at"] || e.item["created_at"]] }
  }
}
$stdout.puts JSON.generate(out)
$stdout.flush
exit!(0) # leave the process's heartbeat and its busy job in Redis, as a running Sidekiq would
