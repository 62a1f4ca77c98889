// Run as a child process by the inbox chaos test: one inbox worker. It prints `ready`, then for each
// event `start <MsgKey>` when its handler begins and `done <MsgKey>` when the handler completes; it
// runs until it is killed.
import { createInbox } from '../../src/queue/index.js';
import { isMessageEvent } from '../../src/webhook/index.js';

const [redisUrl = '', concurrency = '2'] = process.argv.slice(2);
const inbox = createInbox({ connection: { url: redisUrl }, name: 'chaos-in' });
inbox.work(
  async (event) => {
    const key = isMessageEvent(event) ? event.data.MsgKey : 'not a message';
    process.stdout.write(`start ${key}\n`);
    // Some work, so that kills land while events are being processed.
    await new Promise((resolve) => setTimeout(resolve, 40));
    process.stdout.write(`done ${key}\n`);
  },
  { concurrency: Number(concurrency), lockDurationMs: 2000 },
);
process.stdout.write('ready\n');
