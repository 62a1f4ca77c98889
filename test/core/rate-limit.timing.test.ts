// How much of its allowance the in-process limiter uses under sustained load, with real timers: in
// the timing group (vitest.config.ts), so that other files' load does not stretch its timers.
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/core/rate-limit.js';

describe('the in-process rate limiter under sustained load', () => {
  it('uses at least 0.9 of a window of 20 per 200 ms over three windows, never more than all of it', async () => {
    const [max, windowMs] = [20, 200];
    const l = new RateLimiter({ general: { max, windowMs }, upload: { max: 1, windowMs } });
    const granted: number[] = [];
    // Four windows' worth at once: a burst of `max`, then three windows of queue. Each request ends
    // as soon as it is granted, so the limiter alone sets the pace.
    await Promise.all(
      Array.from({ length: 4 * max }, async () => {
        const asked = performance.now();
        const permit = await l.acquire('general');
        granted.push(asked + permit.waitedMs);
        permit.ended();
      }),
    );
    l.stop();
    granted.sort((a, b) => a - b);
    const span = (granted.at(-1) ?? 0) - (granted[0] ?? 0);
    const utilisation = (3 * max) / span / (max / windowMs);
    // A slot comes back a window and a 1% margin after its request ended: 0.99 at best.
    expect(utilisation).toBeLessThanOrEqual(0.991);
    expect(utilisation).toBeGreaterThanOrEqual(0.9);
    // No span of the window holds more than max grants.
    for (let i = max; i < granted.length; i++) {
      expect((granted[i] ?? 0) - (granted[i - max] ?? 0)).toBeGreaterThanOrEqual(windowMs);
    }
  });
});
