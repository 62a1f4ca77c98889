// Run as a child process by trace.test.ts, in one of three roles sharing a redis-server: `receiver`
// (a webhook handler storing events in the inbox; prints `url <url>`), `handler` (an inbox worker whose
// handler adds a reply to the outbox) or `sender` (an outbox worker sending through the fake server).
// Each registers OpenTelemetry globally, as an app's NodeSDK would, and writes its spans to a file.
// It prints `ready`, and stops when its stdin closes.
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OAClient } from '../../src/index.js';
import { createInbox, createOutbox } from '../../src/queue/index.js';
import { createWebhookHandler, isMessageEvent } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { FileSpanExporter } from './span-file.js';

const [role = '', redisUrl = '', spanFile = '', baseUrl = '', apiKey = '', apiSecret = ''] =
  process.argv.slice(2);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(
  new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(new FileSpanExporter(spanFile, role))],
  }),
);

const connection = { url: redisUrl };
const closers: (() => Promise<unknown>)[] = [];
if (role === 'receiver') {
  const inbox = createInbox({ connection, name: 'trace-in' });
  const handler = createWebhookHandler({ onEvent: inbox.store });
  const server = await listen((req, res) => void handler(req, res));
  closers.push(
    () => server.close(),
    () => inbox.close(),
  );
  process.stdout.write(`url ${server.url}\n`);
} else if (role === 'handler') {
  const inbox = createInbox({ connection, name: 'trace-in' });
  const outbox = createOutbox({ connection, name: 'trace-out' });
  const worker = inbox.work(async (event) => {
    if (!isMessageEvent(event)) return;
    const user_id = String(event.data.From_Account);
    await outbox.add(
      'sendText',
      { user_id, msg: 'Thanks, we got it' },
      { key: `reply-${event.data.MsgKey}` },
    );
  });
  closers.push(
    () => worker.close(),
    () => inbox.close(),
    () => outbox.close(),
  );
} else if (role === 'sender') {
  const outbox = createOutbox({ connection, name: 'trace-out' });
  const client = new OAClient({ baseUrl, apiKey, apiSecret });
  const worker = outbox.work({ client });
  closers.push(
    () => worker.close(),
    () => outbox.close(),
    () => client.close(),
  );
} else {
  throw new Error(`unknown role ${role}`);
}
process.stdout.write('ready\n');
process.stdin.resume();
process.stdin.on('end', async () => {
  for (const close of closers) await close();
  process.exit(0);
});
