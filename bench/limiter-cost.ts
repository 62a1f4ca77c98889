/**
 * What the in-process limiter costs a call when it has room: `acquire` then `ended` on a limiter whose
 * limits are never reached, beside Bottleneck (the previous limiter) scheduling a job with the same
 * room. Interleaved in blocks, median of several rounds; each call waits for the one before it, as a
 * caller's request does.
 */
import Bottleneck from 'bottleneck';
import { type Permit, RateLimiter } from '../src/core/rate-limit.js';
import { median } from './support.js';

/** Calls per block: the new limiter's calls take well under a microsecond, Bottleneck's milliseconds. */
const NEW_BLOCK = 20_000;
const BOTTLENECK_BLOCK = 20;
const ROUNDS = 9;

export interface LimiterCost {
  /** Median µs per acquire + ended on a free limiter. */
  newUs: number;
  /** Median µs per `schedule` of Bottleneck with `reservoir: 1e9`. */
  bottleneckUs: number;
  rounds: number;
}

async function newBlock(limiter: RateLimiter): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < NEW_BLOCK; i++) {
    const granted = limiter.acquire('general');
    // A caller awaits only when it gets a promise; with room it never does.
    const permit: Permit = 'then' in granted ? await granted : granted;
    permit.ended();
  }
  return ((performance.now() - started) * 1000) / NEW_BLOCK;
}

async function bottleneckBlock(bottleneck: Bottleneck): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < BOTTLENECK_BLOCK; i++) await bottleneck.schedule(() => Promise.resolve());
  return ((performance.now() - started) * 1000) / BOTTLENECK_BLOCK;
}

/** Runs the interleaved rounds (after one round of warm-up) and returns the medians. */
export async function measureLimiterCost(): Promise<LimiterCost> {
  const huge = { max: 1e9, windowMs: 60_000 };
  const limiter = new RateLimiter({ general: huge, upload: huge });
  const bottleneck = new Bottleneck({ reservoir: 1e9 });
  const news: number[] = [];
  const bottlenecks: number[] = [];
  try {
    await newBlock(limiter);
    await bottleneckBlock(bottleneck);
    for (let round = 0; round < ROUNDS; round++) {
      news.push(await newBlock(limiter));
      bottlenecks.push(await bottleneckBlock(bottleneck));
    }
  } finally {
    limiter.stop();
    await bottleneck.stop({ dropWaitingJobs: true });
  }
  return { newUs: median(news), bottleneckUs: median(bottlenecks), rounds: ROUNDS };
}

/** The block sizes, for the report. */
export const COST_BLOCKS = { newBlock: NEW_BLOCK, bottleneckBlock: BOTTLENECK_BLOCK };
