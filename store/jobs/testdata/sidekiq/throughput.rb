# Reads a redis-server with Sidekiq 6.4's own API and prints, as one JSON object, what Sidekiq
# counts of the jobs it ran: Sidekiq::Stats' processed and failed, and Sidekiq::Stats::History's
# days (the last <days>, UTC, as its web UI charts them).
#
#   ruby throughput.rb redis://127.0.0.1:6379/0 <days> [namespace]
require "json"
require "sidekiq"
require "sidekiq/api"

url, days, namespace = ARGV
Sidekiq.logger = Logger.new($stderr, level: Logger::ERROR)
Redis.silence_deprecations = true
config = {url: url}
config[:namespace] = namespace if namespace && !namespace.empty?
Sidekiq.redis = config

stats = Sidekiq::Stats.new
history = Sidekiq::Stats::History.new(Integer(days))
$stdout.puts JSON.generate(processed: stats.processed, failed: stats.failed,
  days: {processed: history.processed, failed: history.failed})
