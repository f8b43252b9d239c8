# Reads a redis-server with Sidekiq 6.4's own API and prints, as one JSON object, every job it
# sees: each queue's jobs (Sidekiq::Queue, the next to run first) and the scheduled, retry and
# dead sets' (Sidekiq::ScheduledSet, RetrySet, DeadSet), each job as its jid, class, args,
# queue, retry_count and enqueued_at.
#
#   ruby read.rb redis://127.0.0.1:6379/0 [namespace]
require "json"
require "sidekiq"
require "sidekiq/api"

url, namespace = ARGV
Sidekiq.logger = Logger.new($stderr, level: Logger::ERROR)
Redis.silence_deprecations = true
config = {url: url}
config[:namespace] = namespace if namespace && !namespace.empty?
Sidekiq.redis = config

def job(record)
  {jid: record.jid, class: record.klass, args: record.args, queue: record.queue,
   retry_count: record["retry_count"], enqueued_at: record.enqueued_at&.to_f}
end

out = {
  queues: Sidekiq::Queue.all.to_h { |q| [q.name, q.map { |r| job(r) }.reverse] },
  schedule: Sidekiq::ScheduledSet.new.map { |e| job(e) },
  retry: Sidekiq::RetrySet.new.map { |e| job(e) },
  dead: Sidekiq::DeadSet.new.map { |e| job(e) }
}
$stdout.puts JSON.generate(out)
