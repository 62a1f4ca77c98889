// Run as a child process by the waitFor bounds test: adds a key that no worker sends, waits for it
// without a timeout, then closes the outbox. It prints how the wait ended; it must then exit by itself
// (nothing of the outbox may keep it alive).
import { createOutbox } from '../../src/queue/index.js';

const outbox = createOutbox({ connection: { url: process.argv[2] ?? '' }, name: 'wait-close-child' });
await outbox.add('sendText', { user_id: 'u1', msg: 'never sent' }, { key: 'open' });
const waiting = outbox.waitFor(['open']).then(
  () => 'resolved',
  (error: unknown) => (error instanceof Error ? error.name : String(error)),
);
// Past its first reads: the wait is on the events and its re-check timer.
await new Promise((resolve) => setTimeout(resolve, 300));
await outbox.close();
process.stdout.write(`waitFor ${await waiting}\n`);
