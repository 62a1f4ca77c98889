// Without bullmq installed, an outbox or inbox creates fine and fails on first use with a message that
// says what to install.
import { describe, expect, it, vi } from 'vitest';
import { OAConfigError } from '../../src/index.js';
import { createInbox, createOutbox } from '../../src/queue/index.js';

vi.mock('bullmq', () => {
  throw Object.assign(new Error("Cannot find package 'bullmq'"), { code: 'ERR_MODULE_NOT_FOUND' });
});

describe('oa-messaging/queue without bullmq', () => {
  it('creates fine, and says to npm install bullmq on first use', async () => {
    const outbox = createOutbox({ connection: { url: 'redis://127.0.0.1:1' } });
    const error = await outbox.counts().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OAConfigError);
    expect((error as Error).message).toContain('npm install bullmq ioredis');
    const inbox = createInbox({ connection: { url: 'redis://127.0.0.1:1' } });
    await expect(inbox.store({ event_type: 'x' } as never)).rejects.toBeInstanceOf(OAConfigError);
    await outbox.close();
    await inbox.close();
  });
});
