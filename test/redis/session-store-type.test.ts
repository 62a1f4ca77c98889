import { describe, expect, expectTypeOf, it } from 'vitest';
import type { BotSessionStore } from '../../src/bot/index.js';
import type { RedisSessionStore } from '../../src/redis/index.js';

// oa-messaging/redis does not import the bot: its session store fits the bot's interface by its shape,
// which the type checker (npm run typecheck, over the tests too) holds it to here.
describe('the Redis session store and the bot', () => {
  it('fits createBot({ sessions }) by its shape', () => {
    expectTypeOf<RedisSessionStore>().toExtend<BotSessionStore>();
    const fits = (store: RedisSessionStore): BotSessionStore => store;
    expect(typeof fits).toBe('function');
  });
});
