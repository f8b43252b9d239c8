# Pushes jobs the way an app does with Sidekiq 6.4's own client, and runs no Sidekiq process:
# what a Sidekiq keyspace holds while its workers are down and nothing has failed.
#
#   ruby sidekiq_push.rb redis://127.0.0.1:6379/0 [namespace]
#
# What it leaves in Redis (under "<namespace>:" when one is given, with redis-namespace):
#   queues          set   the queue names
#   queue:<name>    list  the jobs, each JSON with the jid Client.push gives it
# No schedule, retry or dead set, no processes set, no stat counters.
require "sidekiq"

url, namespace = ARGV
Sidekiq.logger = Logger.new($stderr, level: Logger::ERROR)
Redis.silence_deprecations = true if Redis.respond_to?(:silence_deprecations=)
config = {url: url}
config[:namespace] = namespace if namespace && !namespace.empty?
Sidekiq.redis = config

class Mailer
  include Sidekiq::Worker
  def perform(*) = nil
end

2.times { |i| Mailer.set(queue: "mail").perform_async(i) }
Mailer.perform_async("default")
puts "{}"
