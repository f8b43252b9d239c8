// rate-limiter-flexible's RateLimiterRedis, written by the library itself through ioredis: the
// fixture of store/limit_rlflex_test.go.
//
//   node rlflex.mjs redis://127.0.0.1:6379
//
// Limiters, all 5 points per 60 s:
//
//   api    the default keyPrefix "rlflx": under (2 consumed), at (5) and over (8: 3 rejected,
//          which the stored counter still counts), and big (one consume of 7 points)
//   login  keyPrefix "login" and blockDuration 300: blocked (6 consumed: the 6th is rejected and
//          blocks the key, so its expiry becomes the block's 300 s)
//
// It prints, as JSON: per key as stored (limiter.getKey), what get() answers (consumedPoints,
// remainingPoints, msBeforeNext), the limiter's points and duration, how many consumes were
// rejected; and now (Date.now() when it printed, in ms).
import Redis from 'ioredis';
import rlf from 'rate-limiter-flexible';

const { RateLimiterRedis } = rlf;

const url = process.argv[2] ?? 'redis://127.0.0.1:6379';
const storeClient = new Redis(url);

const api = new RateLimiterRedis({ storeClient, points: 5, duration: 60 });
const login = new RateLimiterRedis({ storeClient, keyPrefix: 'login', points: 5, duration: 60, blockDuration: 300 });

// [limiter, key, consumes, points per consume]
const plan = [
  [api, 'under', 2, 1],
  [api, 'at', 5, 1],
  [api, 'over', 8, 1],
  [api, 'big', 1, 7],
  [login, 'blocked', 6, 1],
];

const keys = {};
for (const [limiter, key, consumes, points] of plan) {
  let rejected = 0;
  for (let i = 0; i < consumes; i++) {
    try {
      await limiter.consume(key, points);
    } catch (res) {
      if (res instanceof Error) throw res; // a store error, not a refusal
      rejected++;
    }
  }
  const res = await limiter.get(key);
  keys[limiter.getKey(key)] = {
    consumedPoints: res.consumedPoints,
    remainingPoints: res.remainingPoints,
    msBeforeNext: res.msBeforeNext,
    points: limiter.points,
    duration: limiter.duration,
    rejected,
  };
}

console.log(JSON.stringify({ now: Date.now(), keys }));
await storeClient.quit();
