/**
 * The scenarios every runtime runs (app/app.mjs), driven and checked from Node: the fake OA server runs
 * here on loopback, the runtime runs the package's code and reports how each call ended.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createMockServer, type MockServer } from '../../src/testing/index.js';
import {
  APP,
  announcedUrl,
  bundleWorker,
  distMissing,
  findRuntime,
  postJson,
  type Runtime,
  runArgs,
  type Served,
  serveChild,
  serveWorker,
} from './support.js';

/** An error as the runtime reported it (app.mjs `describeError`). */
interface ReportedError {
  name: string;
  message: string;
  isOAError: boolean;
  status?: number;
  code?: string;
  deliveryUnknown?: boolean;
  retryAfterMs?: number;
}
type Outcome = { ok: true; value: unknown; ms: number } | { ok: false; error: ReportedError; ms: number };

const MEDIA = new URL('../fixtures/media/', import.meta.url);
const FILES = {
  image: { name: 'sample.jpg', type: 'image/jpeg' },
  video: { name: 'sample.mp4', type: 'video/mp4' },
  audio: { name: 'sample.mp3', type: 'audio/mpeg' },
} as const;
const GROUP = '0b0c6f6e-6a57-4c55-9a39-2a1f1c0a7a10';
const SESSION = '7d1f9a4e-3c2b-4f7e-8a6d-5e4c3b2a1f00';
const TEXT_ITEM = { type: 'message', msg: 'hello from a broadcast' };
const SEND_PATH = '/webhook/broadcast-message';

/** Why the suite of `runtime` cannot run here, or `undefined`. */
function missing(runtime: Runtime): string | undefined {
  const found = findRuntime(runtime);
  return 'missing' in found ? found.missing : distMissing();
}

/** Starts the app of app/ in `runtime`, its client settings pointing at `mock`. */
async function start(runtime: Runtime, mock: MockServer): Promise<Served> {
  const found = findRuntime(runtime);
  if (!('bin' in found)) throw new Error(found.missing);
  const env = { OA_BASE_URL: mock.url, OA_API_KEY: mock.apiKey, OA_API_SECRET: mock.apiSecret };
  if (runtime === 'workerd') {
    return serveWorker(found.bin, await bundleWorker(fileURLToPath(new URL('worker.mjs', APP))), env);
  }
  const serve = fileURLToPath(new URL('serve.mjs', APP));
  return serveChild(found.bin, runArgs(runtime, serve), { env, withinMs: 30_000 }, announcedUrl);
}

/** Defines the runtime suite of `runtime`: skipped, with the reason, when the runtime or dist is missing. */
export function defineRuntimeSuite(runtime: Runtime): void {
  const skip = missing(runtime);
  if (skip) console.warn(`runtime suite of ${runtime} skipped: ${skip}`);

  describe.skipIf(skip !== undefined)(`in ${runtime}`, () => {
    let mock: MockServer;
    let app: Served | undefined;
    let startError: unknown;
    let config: { baseUrl: string; apiKey: string; apiSecret: string };

    beforeAll(async () => {
      mock = await createMockServer({ rateLimit: false, transcodeMs: 100 });
      config = { baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret };
      // A runtime that does not start fails every test with the reason (not a skip of the file).
      app = await start(runtime, mock).catch((error: unknown) => {
        startError = error;
        return undefined;
      });
    }, 60_000);
    afterEach(() => mock.reset());
    afterAll(async () => {
      await app?.stop();
      await mock?.close();
    });

    const serving = (): Served => {
      if (app) return app;
      throw new Error(`${runtime} did not start the app`, { cause: startError });
    };
    /** Runs a scenario in the runtime; a crash of the scenario fails with the runtime's output. */
    async function scenario<T = Outcome>(name: string, body: Record<string, unknown>): Promise<T> {
      const answer = await postJson<T & { crashed?: boolean }>(`${serving().url}/scenario/${name}`, body);
      if (answer.crashed)
        expect.fail(`scenario ${name} crashed: ${JSON.stringify(answer)}\n${serving().output()}`);
      return answer;
    }
    const call = (method: string, ...args: unknown[]) => scenario('call', { config, method, args });
    const paths = () =>
      mock.requests.map((r) => `${r.path.replace('/api/v2/public/', '')} ${r.status ?? r.outcome}`);
    const sends = () => mock.requests.filter((r) => r.path.endsWith(SEND_PATH));
    /** The value of a call that must have succeeded (else the test fails with the reported error). */
    const succeeded = (outcome: Outcome) => {
      expect(outcome, paths().join(', ')).toMatchObject({ ok: true });
      return (outcome as { value: Record<string, unknown> }).value;
    };
    const failed = (outcome: Outcome) => {
      expect(outcome, paths().join(', ')).toMatchObject({ ok: false });
      return (outcome as { error: ReportedError }).error;
    };

    describe('every endpoint', () => {
      it('generateToken and refreshToken', async () => {
        const pair = succeeded(await call('generateToken'));
        expect(pair).toMatchObject({ access_token: expect.any(String), refresh_token: expect.any(String) });
        const renewed = succeeded(await call('refreshToken', pair.refresh_token));
        expect(renewed.access_token).not.toBe(pair.access_token);
        expect(paths()).toEqual(['auth/token 201', 'auth/refresh-token 201']);
        expect(mock.requests[1]?.body).toEqual({ refresh_token: pair.refresh_token });
      });

      it('sendGreeting, sendText and sendImage reach the fake', async () => {
        succeeded(await call('sendGreeting', { user_id: 'u-greet' }));
        expect(succeeded(await call('sendText', { user_id: 'u-text', msg: 'hello' }))).toBe('success');
        succeeded(
          await call('sendImage', { user_id: 'u-image', image_url: 'https://cdn.example.com/a.jpg' }),
        );
        expect(mock.deliveries.map((d) => [d.endpoint, d.user_ids, d.items[0]?.msg])).toEqual([
          ['sendGreeting', ['u-greet'], expect.any(String)],
          ['sendText', ['u-text'], 'hello'],
          ['sendImage', ['u-image'], 'https://cdn.example.com/a.jpg'],
        ]);
        expect(mock.requests.find((r) => r.path.endsWith(SEND_PATH))?.headers.authorization).toMatch(
          /^Bearer /,
        );
      });

      it('broadcast, broadcastToGroup and broadcastToMemberSession reach the fake', async () => {
        mock.members = { groups: { [GROUP]: ['g1', 'g2'] }, memberSessions: { [SESSION]: ['s1'] } };
        succeeded(
          await call('broadcast', { target: 'selected', user_ids: ['b1', 'b2'], items: [TEXT_ITEM] }),
        );
        succeeded(await call('broadcastToGroup', { account_provider_group_id: GROUP, items: [TEXT_ITEM] }));
        succeeded(
          await call('broadcastToMemberSession', { member_group_broadcast_id: SESSION, items: [TEXT_ITEM] }),
        );
        expect(mock.deliveries.map((d) => [d.endpoint, d.recipients])).toEqual([
          ['broadcast', ['b1', 'b2']],
          ['broadcastToGroup', ['g1', 'g2']],
          ['broadcastToMemberSession', ['s1']],
        ]);
      });

      for (const from of ['blob', 'stream'] as const) {
        it(`uploads of an image, a video and an audio file from a ${from === 'blob' ? 'Blob' : 'ReadableStream'}, then sendVideo and sendAudio`, async () => {
          const results: Record<string, Record<string, unknown>> = {};
          for (const kind of ['image', 'video', 'audio'] as const) {
            const bytes = readFileSync(new URL(FILES[kind].name, MEDIA));
            const outcome = await scenario<Outcome>('upload', {
              config,
              kind,
              from,
              base64: bytes.toString('base64'),
              type: FILES[kind].type,
            });
            results[kind] = succeeded(outcome);
            const stored = mock.uploads.at(-1);
            expect(stored, `the fake stored the ${kind}`).toMatchObject({
              kind,
              size: bytes.byteLength,
              sha256: createHash('sha256').update(bytes).digest('hex'),
            });
          }
          expect(results.image).toMatchObject({ url: expect.any(String) });
          mock.completeTranscodes();
          const video = results.video as { ticket_id: string };
          expect(succeeded(await call('sendVideo', { user_id: 'u-video', ticket_id: video.ticket_id }))).toBe(
            'success',
          );
          const { audio_url, audio_uuid, audio_size, audio_duration } = results.audio as Record<
            string,
            unknown
          >;
          const audio = { user_id: 'u-audio', audio_url, audio_uuid, audio_size, audio_duration };
          expect(succeeded(await call('sendAudio', audio))).toBe('success');
          expect(mock.deliveries.map((d) => d.endpoint)).toEqual(['sendVideo', 'sendAudio']);
        });
      }
    });

    it('a 401 renews the token once and replays the send', async () => {
      mock.injectFault(
        { kind: 'error', status: 401, code: 'UNAUTHORIZED', info: 'Token expired' },
        { path: SEND_PATH },
      );
      expect(succeeded(await call('sendText', { user_id: 'u-401', msg: 'renewed' }))).toBe('success');
      expect(paths()).toEqual([
        'auth/token 201',
        'webhook/broadcast-message 401',
        'auth/refresh-token 201',
        'webhook/broadcast-message 201',
      ]);
      const [first, second] = sends();
      expect(second?.headers.authorization).not.toBe(first?.headers.authorization);
    });

    it('a 429 with Retry-After: the send waits that long, then goes again', async () => {
      mock.injectFault({ kind: 'rate-limit', retryAfterSeconds: 1 }, { path: SEND_PATH });
      expect(succeeded(await call('sendText', { user_id: 'u-429', msg: 'later' }))).toBe('success');
      const [refused, accepted] = sends();
      expect([refused?.status, accepted?.status]).toEqual([429, 201]);
      expect((accepted?.at ?? 0) - (refused?.at ?? 0)).toBeGreaterThanOrEqual(950);
      expect(mock.deliveries).toHaveLength(1);
    });

    it('a send whose connection fails: OAConnectionError, deliveryUnknown, not retried', async () => {
      mock.injectFault('reset-after-processing', { path: SEND_PATH });
      const error = failed(await call('sendText', { user_id: 'u-reset', msg: 'lost answer' }));
      expect(error).toMatchObject({ name: 'OAConnectionError', isOAError: true, deliveryUnknown: true });
      expect(sends().map((r) => r.outcome)).toEqual(['reset']);
    });

    it('a send that gets no answer ends at its deadline: OATimeoutError, deliveryUnknown', async () => {
      mock.injectFault('hang', { path: SEND_PATH });
      const outcome = await call('sendText', { user_id: 'u-hang', msg: 'no answer' }, { timeoutMs: 500 });
      expect(failed(outcome)).toMatchObject({
        name: 'OATimeoutError',
        isOAError: true,
        deliveryUnknown: true,
      });
      expect(outcome.ms).toBeLessThan(5000);
      expect(sends()).toHaveLength(1);
    });

    it('close() ends a send in flight and refuses calls after it', async () => {
      mock.injectFault('hang', { path: SEND_PATH });
      const { value } = await scenario<{ value: Record<'inFlight' | 'closed' | 'after', Outcome> }>('close', {
        config,
        delayMs: 500,
      });
      expect(sends(), 'the send was in flight when close() was called').toHaveLength(1);
      expect(failed(value.inFlight)).toMatchObject({ isOAError: true, deliveryUnknown: true });
      expect(value.closed).toMatchObject({ ok: true });
      expect(value.closed.ms).toBeLessThan(2000);
      expect(failed(value.after)).toMatchObject({ isOAError: true, deliveryUnknown: false });
      expect(sends()).toHaveLength(1);
    });

    it('a webhook event posted to its fetch handler is answered, and its reply reaches the fake', async () => {
      const callback = JSON.parse(
        readFileSync(
          new URL('../fixtures/tim/tencent-doc-C2C.CallbackAfterSendMsg-1.json', import.meta.url),
          'utf8',
        ),
      );
      const event = {
        event_type: 'message',
        username: 'oa_shop',
        data: callback,
        timestamp: new Date().toISOString(),
      };
      const response = await fetch(`${serving().url}/oa-webhook`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(event),
        signal: AbortSignal.timeout(10_000),
      });
      expect({ status: response.status, body: await response.json() }).toEqual({
        status: 200,
        body: { ok: true },
      });
      await expect
        .poll(() => mock.deliveries.map((d) => [d.endpoint, d.user_ids, d.items[0]?.msg]), {
          timeout: 10_000,
        })
        .toEqual([['sendText', ['jared'], 'echo: red packet']]);
    });

    it('a handler with dedupe made as the module loads: a redelivery is answered as a duplicate', async () => {
      const event = JSON.stringify({
        event_type: 'message',
        username: 'oa_shop',
        timestamp: new Date().toISOString(),
        data: {
          CallbackCommand: 'C2C.CallbackAfterSendMsg',
          From_Account: 'jared',
          To_Account: 'oa_shop',
          MsgKey: `dedupe-${runtime}`,
          MsgBody: [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'once' } }],
        },
      });
      const post = async () => {
        const response = await fetch(`${serving().url}/oa-webhook-dedupe`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: event,
          signal: AbortSignal.timeout(10_000),
        });
        return { status: response.status, body: await response.json() };
      };
      expect(await post()).toEqual({ status: 200, body: { ok: true } });
      expect(await post()).toEqual({ status: 200, body: { ok: true, duplicate: true } });
    });

    if (runtime !== 'workerd') {
      it('oa-messaging/testing: the fake server started in the runtime answers a sendText', async () => {
        const outcome = await scenario<Outcome & { deliveries: unknown[] }>('mock-server', {});
        expect(succeeded(outcome)).toBe('success');
        expect(outcome.deliveries).toEqual([
          {
            endpoint: 'sendText',
            user_ids: ['u-mock'],
            items: [{ type: 'message', msg: 'to the fake in this runtime' }],
          },
        ]);
      });

      it("oa-messaging/testing/msw: msw's handlers in the runtime answer a sendText made with fetch", async () => {
        const outcome = await scenario<Outcome & { deliveries: unknown[] }>('msw', {});
        expect(succeeded(outcome)).toBe('success');
        expect(outcome.deliveries).toEqual([{ endpoint: 'sendText', user_ids: ['u-msw'] }]);
      });
    }
  });
}
