// The bot's router, context and sessions against the fake OA server on loopback: each filter and
// `hears`, middleware order, `catch`, the fallback, replies to the sender, sessions, per-user order.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createBot } from '../../src/bot/index.js';
import { OAClient, OAValidationError } from '../../src/index.js';
import {
  buildInboundEvent,
  createMockServer,
  type InboundMessage,
  type InboundMessageOptions,
  type MockServer,
} from '../../src/testing/index.js';
import {
  createFetchWebhookHandler,
  createWebhookHandler,
  parseWebhookEvent,
  type WebhookEvent,
} from '../../src/webhook/index.js';
import { listen, post } from '../webhook/support.js';

let mock: MockServer;
let client: OAClient;

beforeAll(async () => {
  mock = await createMockServer();
  client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
});
afterAll(async () => {
  await client.close();
  await mock.close();
});
beforeEach(() => mock.reset());

const event = (message: InboundMessage, options: InboundMessageOptions = {}): WebhookEvent =>
  parseWebhookEvent(JSON.stringify(buildInboundEvent(message, options)));

const sentTo = (user: string) =>
  mock.deliveries
    .filter((d) => d.recipients.includes(user))
    .map((d) => ({ endpoint: d.endpoint, items: d.items }));

describe('routing', () => {
  it('each filter runs for its kind of message; the context is typed by it', async () => {
    const bot = createBot({ client });
    const seen: string[] = [];
    bot.on('text', (ctx) => void seen.push(`text:${ctx.text}:${ctx.elements[0].MsgContent.Text}`));
    bot.on('image', (ctx) => void seen.push(`image:${ctx.media[0].kind}:${ctx.media.length}`));
    bot.on('video', (ctx) => void seen.push(`video:${ctx.media[0].kind}`));
    bot.on('sound', (ctx) => void seen.push(`sound:${ctx.media[0].durationSeconds}`));
    bot.on('file', (ctx) => void seen.push(`file:${ctx.media[0].fileName}`));
    bot.on(['location', 'face', 'custom'], (ctx) => void seen.push(`other:${ctx.elements[0].MsgType}`));
    await bot.handle(event('hello'));
    await bot.handle(event({ type: 'image' }));
    await bot.handle(event({ type: 'video' }));
    await bot.handle(event({ type: 'audio', second: 3 } as InboundMessage));
    await bot.handle(
      event({
        type: 'elements',
        elements: [{ MsgType: 'TIMFileElem', MsgContent: { FileName: 'a.pdf', Url: 'https://x/a' } }],
      }),
    );
    await bot.handle(
      event({
        type: 'elements',
        elements: [{ MsgType: 'TIMLocationElem', MsgContent: { Desc: 'here', Latitude: 1, Longitude: 2 } }],
      }),
    );
    await bot.handle(
      event({
        type: 'elements',
        elements: [{ MsgType: 'TIMFaceElem', MsgContent: { Index: 1, Data: 'x' } }],
      }),
    );
    await bot.handle(
      event({ type: 'elements', elements: [{ MsgType: 'TIMCustomElem', MsgContent: { Data: '{}' } }] }),
    );
    expect(seen).toEqual([
      'text:hello:hello',
      'image:image:1',
      'video:video',
      expect.stringMatching(/^sound:/),
      'file:a.pdf',
      'other:TIMLocationElem',
      'other:TIMFaceElem',
      'other:TIMCustomElem',
    ]);
  });

  it('hears a string (the whole trimmed text) or a RegExp, with ctx.match; the first handler that matches wins', async () => {
    const bot = createBot({ client });
    const seen: unknown[] = [];
    bot.hears('menu', (ctx) => void seen.push(['menu', ctx.match]));
    bot.hears(/order (\d+)/i, (ctx) => void seen.push(['order', ctx.match[1]]));
    bot.on('text', (ctx) => void seen.push(['text', ctx.text]));
    await bot.handle(event('  menu '));
    await bot.handle(event('Where is ORDER 42?'));
    await bot.handle(event('menus'));
    expect(seen).toEqual([
      ['menu', 'menu'],
      ['order', '42'],
      ['text', 'menus'],
    ]);
  });

  it('middleware runs in order around the handlers (koa), next() passes on, and the fallback gets the rest', async () => {
    const bot = createBot({ client });
    const order: string[] = [];
    bot.use(async (_ctx, next) => {
      order.push('a-in');
      await next();
      order.push('a-out');
    });
    bot.use(async (_ctx, next) => {
      order.push('b-in');
      await next();
      order.push('b-out');
    });
    bot.on('text', async (_ctx, next) => {
      order.push('text-1');
      await next();
    });
    bot.on('message', () => void order.push('message'));
    bot.fallback((ctx) => void order.push(`fallback:${ctx.event.event_type}`));
    await bot.handle(event('hi'));
    expect(order).toEqual(['a-in', 'b-in', 'text-1', 'message', 'b-out', 'a-out']);
    order.length = 0;
    const unknown = parseWebhookEvent(JSON.stringify({ event_type: 'follow', data: { user: 'x' } }));
    await bot.handle(unknown);
    expect(order).toEqual(['a-in', 'b-in', 'fallback:follow', 'b-out', 'a-out']);
  });

  it('an unmatched or unknown event without a fallback is not an error', async () => {
    const bot = createBot({ client });
    bot.on('image', () => {
      throw new Error('not reached');
    });
    await expect(bot.handle(event('text only'))).resolves.toBeUndefined();
    await expect(bot.handle(parseWebhookEvent('{"event_type":"other"}'))).resolves.toBeUndefined();
  });

  it('catch gets what a handler threw, with its context; without catch, handle rejects', async () => {
    const failing = createBot({ client });
    failing.on('text', () => {
      throw new Error('boom');
    });
    await expect(failing.handle(event('x'))).rejects.toThrow('boom');
    const caught: unknown[] = [];
    failing.catch((error, ctx) => void caught.push([(error as Error).message, ctx.from]));
    await expect(failing.handle(event('x', { from: 'u-9' }))).resolves.toBeUndefined();
    expect(caught).toEqual([['boom', 'u-9']]);
  });

  it('bad setup is an OAConfigError at once', () => {
    expect(() => createBot({} as never)).toThrow(/needs \{ client \}/);
    const bot = createBot({ client });
    expect(() => bot.on('photo' as never, () => {})).toThrow(/unknown filter "photo"/);
    expect(() => bot.on('text')).toThrow(/handler/);
    expect(() => bot.hears(42 as never, () => {})).toThrow(/string, a RegExp/);
  });
});

describe('replies', () => {
  it('go to the sender, through the real API, with no user_id in the handler', async () => {
    const bot = createBot({ client });
    bot.on('text', async (ctx) => {
      await ctx.reply(`You said ${ctx.text}`, { desc: 'reply' });
      await ctx.replyWithGreeting();
    });
    bot.on('image', (ctx) => ctx.replyWithImage(ctx.media[0].url, { link: 'https://example.com/shop' }));
    await bot.handle(event('hello', { from: 'alice' }));
    await bot.handle(event({ type: 'image', url: 'https://cdn.example.com/p.jpg' }, { from: 'bob' }));
    expect(sentTo('alice')).toEqual([
      { endpoint: 'sendText', items: [expect.objectContaining({ msg: 'You said hello', desc: 'reply' })] },
      { endpoint: 'sendGreeting', items: [expect.anything()] },
    ]);
    expect(sentTo('bob')).toEqual([
      {
        endpoint: 'sendImage',
        items: [expect.objectContaining({ link: 'https://example.com/shop' })],
      },
    ]);
  });

  it('an image, audio or video file is uploaded, then sent to the sender', async () => {
    const bot = createBot({ client });
    const png = Buffer.from(
      '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4570000000049454e44ae426082',
      'hex',
    );
    bot.on('text', (ctx) => ctx.replyWithImage({ data: png, filename: 'dot.png' }));
    await bot.handle(event('pic please', { from: 'carol' }));
    expect(sentTo('carol').map((d) => d.endpoint)).toEqual(['sendImage']);
    expect(mock.requests.map((r) => r.path)).toContain('/api/v2/public/upload/image');
  });

  it('a voice and a video reply: uploaded, the video sent once transcoded, both to the sender', async () => {
    const media = (name: string) => new URL(`../fixtures/media/${name}`, import.meta.url);
    const bot = createBot({ client });
    bot.on('text', async (ctx) => {
      await ctx.replyWithAudio(media('sample.wav'));
      await ctx.replyWithVideo(media('sample.mp4'));
    });
    const handled = bot.handle(event('media please', { from: 'hana' }));
    // The fake keeps an uploaded video converting until told (or its transcodeMs passes).
    await expect
      .poll(() => mock.requests.some((r) => r.path.endsWith('/upload/video')), { timeout: 10_000 })
      .toBe(true);
    mock.completeTranscodes();
    await handled;
    expect(sentTo('hana').map((d) => d.endpoint)).toEqual(['sendAudio', 'sendVideo']);
  }, 30_000);

  it('a received image without a URL is an OAValidationError, nothing sent', async () => {
    const bot = createBot({ client });
    bot.on('image', (ctx) => ctx.replyWithImage(undefined));
    const error = await bot
      .handle(
        event({
          type: 'elements',
          elements: [
            {
              MsgType: 'TIMImageElem',
              MsgContent: { UUID: 'old', ImageFormat: 1, ImageInfoArray: [{ Type: 1, Size: 9 }] },
            },
          ],
        }),
      )
      .catch((e) => e);
    expect(error).toBeInstanceOf(OAValidationError);
    expect(mock.deliveries).toHaveLength(0);
  });
});

describe('sessions', () => {
  it('are loaded before the handlers and saved after, per user', async () => {
    const bot = createBot<{ count: number }>({ client, initialSession: () => ({ count: 0 }) });
    const counts: string[] = [];
    bot.on('text', (ctx) => {
      ctx.session.count++;
      counts.push(`${ctx.from}:${ctx.session.count}`);
    });
    await bot.handle(event('a', { from: 'u1' }));
    await bot.handle(event('b', { from: 'u1' }));
    await bot.handle(event('c', { from: 'u2' }));
    await bot.handle(event('d', { from: 'u1' }));
    expect(counts).toEqual(['u1:1', 'u1:2', 'u2:1', 'u1:3']);
  });

  it('a session that is not JSON, or too large, fails the event with a clear error, and is not saved', async () => {
    const bot = createBot<Record<string, unknown>>({ client, maxSessionBytes: 100 });
    const shown: unknown[] = [];
    bot.on('text', (ctx) => {
      if (ctx.text === 'date') ctx.session.when = new Date();
      if (ctx.text === 'big') ctx.session.blob = 'x'.repeat(200);
      if (ctx.text === 'fn') ctx.session.fn = () => 1;
      if (ctx.text === 'ok') ctx.session.seen = ((ctx.session.seen as number | undefined) ?? 0) + 1;
      if (ctx.text === 'show') shown.push(structuredClone(ctx.session));
    });
    await expect(bot.handle(event('date'))).rejects.toThrow(/session\.when is a Date/);
    await expect(bot.handle(event('big'))).rejects.toThrow(/over maxSessionBytes \(100\)/);
    const fn = await bot.handle(event('fn')).catch((e: unknown) => e);
    expect(fn).toBeInstanceOf(OAValidationError);
    expect((fn as OAValidationError).issues).toEqual([
      { path: ['session', 'fn'], message: expect.stringMatching(/function/) },
    ]);
    await bot.handle(event('ok'));
    await bot.handle(event('show'));
    // Only the valid change was saved; the failed events left nothing behind.
    expect(shown).toEqual([{ seen: 1 }]);
  });

  it('a handler that throws leaves the session as it was', async () => {
    const bot = createBot<{ n: number }>({ client, initialSession: () => ({ n: 0 }) });
    const seen: number[] = [];
    bot.on('text', (ctx) => {
      ctx.session.n++;
      seen.push(ctx.session.n);
      if (ctx.text === 'fail') throw new Error('no');
    });
    await bot.handle(event('one'));
    await expect(bot.handle(event('fail'))).rejects.toThrow('no');
    await bot.handle(event('two'));
    expect(seen).toEqual([1, 2, 2]);
  });
});

describe('order in one process', () => {
  it('events of one sender run one at a time, in arrival order; other senders run alongside', async () => {
    const bot = createBot({ client, sessions: false });
    const log: string[] = [];
    bot.on('text', async (ctx) => {
      log.push(`start ${ctx.from} ${ctx.text}`);
      await new Promise((r) => setTimeout(r, ctx.text === '1' ? 60 : 5));
      log.push(`end ${ctx.from} ${ctx.text}`);
    });
    await Promise.all([
      bot.handle(event('1', { from: 'a' })),
      bot.handle(event('2', { from: 'a' })),
      bot.handle(event('1', { from: 'b' })),
    ]);
    expect(log.indexOf('end a 1')).toBeLessThan(log.indexOf('start a 2'));
    // b's first event started before a's first ended: senders do not wait for each other.
    expect(log.indexOf('start b 1')).toBeLessThan(log.indexOf('end a 1'));
  });
});

describe('from a webhook handler', () => {
  it('bot.handle is onEvent: an inbound message posted to the receiver gets its reply from the fake', async () => {
    const bot = createBot({ client });
    bot.on('text', (ctx) => ctx.reply(`echo: ${ctx.text}`));
    const handler = createWebhookHandler({ onEvent: bot.handle });
    const server = await listen((req, res) => void handler(req, res));
    try {
      const { status } = await post(server.url, buildInboundEvent('ping', { from: 'dave' }) as never);
      expect(status).toBe(200);
      expect(sentTo('dave')).toEqual([
        { endpoint: 'sendText', items: [expect.objectContaining({ msg: 'echo: ping' })] },
      ]);
    } finally {
      await server.close();
    }
  });

  it('the same bot answers from the fetch handler (Workers, Deno, Bun, Next.js)', async () => {
    const bot = createBot({ client });
    bot.on('text', (ctx) => ctx.reply(`fetch: ${ctx.text}`));
    const handle = createFetchWebhookHandler({ onEvent: bot.handle });
    const body = JSON.stringify(buildInboundEvent('pong', { from: 'fay' }));
    const answer = await handle(
      new Request('http://127.0.0.1/oa/webhook', {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(answer.status).toBe(200);
    expect(sentTo('fay')).toEqual([
      { endpoint: 'sendText', items: [expect.objectContaining({ msg: 'fetch: pong' })] },
    ]);
  });
});

describe('mock.say: a fake user chats with the bot', () => {
  it('posts as the user and resolves with the replies the fake recorded; a missing reply is a bounded error', async () => {
    const bot = createBot({ client });
    bot.hears('two', async (ctx) => {
      await ctx.reply('one');
      await ctx.reply('two');
    });
    bot.on('text', () => {});
    const handler = createWebhookHandler({ onEvent: bot.handle });
    const server = await listen((req, res) => void handler(req, res));
    try {
      const replies = await mock.say('gus', 'two', { webhookUrl: server.url, replies: 2 });
      expect(replies.map((r) => r.items[0]?.msg)).toEqual(['one', 'two']);
      const started = Date.now();
      await expect(mock.say('gus', 'nothing', { webhookUrl: server.url, timeoutMs: 300 })).rejects.toThrow(
        /0 of 1 replies to gus within 300 ms/,
      );
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      await server.close();
    }
  });
});
