# Fills one queue with many jobs through Sidekiq's own Client.push_bulk, for the search's tests
# (store/search_test.go), and prints, as JSON, the jids of the planted jobs.
#
#   ruby many.rb redis://127.0.0.1:6379/0 <queue> <jobs> <planted place>,...
#
# Job i (0-based) has args [{"user_id": i + 1000000, "note": "job <i>"}]; each planted place i
# has args [{"user_id": 42, "note": "needle-7f3 <i>"}] instead. Half of the jobs are pushed into
# the queue and half scheduled an hour ahead, so the queue's waiting jobs and the schedule hold
# plants in the order given.
require "json"
require "sidekiq"
require "sidekiq/api"

url, queue, jobs, planted = ARGV
Sidekiq.logger = Logger.new($stderr, level: Logger::ERROR)
Redis.silence_deprecations = true
Sidekiq.redis = {url: url}

class BulkJob
  include Sidekiq::Worker
  def perform(*); end
end

plants = planted.split(",").map(&:to_i)
args = Array.new(jobs.to_i) do |i|
  plants.include?(i) ? [{"user_id" => 42, "note" => "needle-7f3 #{i}"}] : [{"user_id" => i + 1_000_000, "note" => "job #{i}"}]
end
jids = []
args.each_slice(1000).with_index do |slice, n|
  opts = {"class" => BulkJob, "queue" => queue, "args" => slice}
  opts["at"] = [Time.now.to_f + 3600] * slice.size if n.odd?
  jids.concat(Sidekiq::Client.push_bulk(opts))
end
puts JSON.generate({planted: plants.map { |i| jids[i] }})
