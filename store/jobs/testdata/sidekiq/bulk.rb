# Fills Sidekiq 6.4's retry and dead sets the way a failing job reaches them (Sidekiq's own
# JobRetry handler, as a processor runs it around a job that raises), or runs Sidekiq's own
# RetrySet#retry_all / DeadSet#retry_all, for the bulk actions' tests and benchmark.
#
#   ruby bulk.rb fill redis://127.0.0.1:6379/0 RETRIES DEAD   # prints {"retry":N,"dead":N}
#   ruby bulk.rb retry_all redis://127.0.0.1:6379/0 retry|dead # prints {"moved":N}
#   ruby bulk.rb kill_all redis://127.0.0.1:6379/0 [MAX]       # RetrySet#kill_all, {"moved":N}
#   ruby bulk.rb push redis://127.0.0.1:6379/0 QUEUE N         # N jobs through Client#push, {"size":N}
#   ruby bulk.rb clear redis://127.0.0.1:6379/0 QUEUE          # Queue#clear, {"cleared":N}
#   ruby bulk.rb take redis://127.0.0.1:6379/0 QUEUE N         # BasicFetch takes N, {"args":[...]}
#
# kill_all with MAX sets Sidekiq.options[:dead_max_jobs] to it first, as an app that keeps
# fewer dead jobs does.
#
# fill pushes RETRIES jobs (alternately in queues "default" and "mail", each with its args
# [i]) and DEAD jobs with retry: 0 through Sidekiq::Client, takes each off its queue as a fetcher
# would (RPOP), and hands it to JobRetry#global with a block that raises: Sidekiq ZADDs it to the
# retry set (retry_count 0, failed_at, error_message) or, its retries used up, kills it into the
# dead set. Logs go to stderr; stdout holds the JSON alone.
require "json"
require "sidekiq"
require "sidekiq/api"
require "sidekiq/job_retry"
require "sidekiq/fetch"

mode, url, a, b = ARGV
Sidekiq.logger = Logger.new($stderr, level: Logger::ERROR)
Redis.silence_deprecations = true
Sidekiq.redis = {url: url}

def fail_job(queue)
  jobstr = Sidekiq.redis { |c| c.rpop("queue:#{queue}") }
  Sidekiq::JobRetry.new.global(jobstr, queue) { raise "flaky" }
rescue Sidekiq::JobRetry::Handled
  nil
end

case mode
when "fill"
  a.to_i.times do |i|
    queue = i.even? ? "default" : "mail"
    Sidekiq::Client.push("class" => "Flaky", "queue" => queue, "args" => [i], "retry" => 3)
    fail_job(queue)
  end
  b.to_i.times do |i|
    Sidekiq::Client.push("class" => "Flaky", "queue" => "default", "args" => ["dead-#{i}"], "retry" => 0)
    fail_job("default")
  end
  puts JSON.generate(retry: Sidekiq::RetrySet.new.size, dead: Sidekiq::DeadSet.new.size)
when "retry_all"
  set = a == "dead" ? Sidekiq::DeadSet.new : Sidekiq::RetrySet.new
  n = set.size
  set.retry_all
  puts JSON.generate(moved: n - set.size)
when "kill_all"
  Sidekiq.options[:dead_max_jobs] = a.to_i if a
  set = Sidekiq::RetrySet.new
  n = set.size
  set.kill_all
  puts JSON.generate(moved: n - set.size)
when "push"
  b.to_i.times do |i|
    Sidekiq::Client.push("class" => "Mailer", "queue" => a, "args" => [i])
  end
  puts JSON.generate(size: Sidekiq::Queue.new(a).size)
when "clear"
  q = Sidekiq::Queue.new(a)
  n = q.size
  q.clear
  puts JSON.generate(cleared: n)
when "take"
  fetch = Sidekiq::BasicFetch.new(queues: [a], strict: true)
  args = []
  ARGV[3].to_i.times do
    work = fetch.retrieve_work
    break unless work
    args << Sidekiq.load_json(work.job)["args"][0]
  end
  puts JSON.generate(args: args)
else
  abort "usage: bulk.rb fill|retry_all|kill_all|push|clear|take URL ..."
end
