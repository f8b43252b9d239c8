# Reads a redis-server with Sidekiq 6.4's own API and prints, as one JSON array, the processes
# Sidekiq::ProcessSet lists (without its cleanup, which would delete the expired ones), each as
# its identity, hostname, pid, busy, concurrency, queues, beat, quiet and started_at.
#
#   ruby processes.rb redis://127.0.0.1:6379/0 [namespace]
require "json"
require "sidekiq"
require "sidekiq/api"

url, namespace = ARGV
Sidekiq.logger = Logger.new($stderr, level: Logger::ERROR)
Redis.silence_deprecations = true
config = {url: url}
config[:namespace] = namespace if namespace && !namespace.empty?
Sidekiq.redis = config

out = Sidekiq::ProcessSet.new(false).map do |p|
  {identity: p.identity, hostname: p["hostname"], pid: p["pid"], busy: p["busy"],
   concurrency: p["concurrency"], queues: p.queues, beat: p["beat"], quiet: p.stopping?,
   started_at: p["started_at"]}
end
$stdout.puts JSON.generate(out)
