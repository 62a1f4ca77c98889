// The scenarios of the runtime suites, as a package user would write them: plain ESM that imports
// the built package. Each runtime serves `createApp(env).fetch` (Bun.serve, Deno.serve, a Worker's
// fetch); the test in Node sets up the fake OA server, asks for a scenario over HTTP and checks what
// the fake received and what the runtime reported.
import { isOAError, OAClient } from 'oa-messaging';
import { createFetchWebhookHandler, getMessageText, isMessageEvent } from 'oa-messaging/webhook';

/** An error as the test in Node sees it: its class name and the fields the SDK promises. */
export function describeError(error) {
  return {
    name: error?.name,
    message: String(error?.message ?? error),
    isOAError: isOAError(error),
    status: error?.status,
    code: error?.code,
    deliveryUnknown: error?.deliveryUnknown,
    retryAfterMs: error?.retryAfterMs,
  };
}

/** How a promise settled, and after how many ms. */
export async function settle(promise) {
  const started = performance.now();
  try {
    const value = await promise;
    return { ok: true, value, ms: performance.now() - started };
  } catch (error) {
    return { ok: false, error: describeError(error), ms: performance.now() - started };
  }
}

const json = (body, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function bytesOf(base64) {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A web ReadableStream of the bytes, in chunks of at most 1 KB (a body that arrives in parts). */
function streamOf(bytes) {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + 1024));
      offset += 1024;
    },
  });
}

const UPLOADS = { image: 'uploadImage', video: 'uploadVideo', audio: 'uploadAudio' };

/** The scenarios, by name; each takes the JSON the test posted and answers JSON. */
export const scenarios = {
  /** One client method with the given arguments: `{ config, method, args }`. */
  async call({ config, method, args }) {
    const client = new OAClient(config);
    try {
      return await settle(client[method](...args));
    } finally {
      await client.close();
    }
  },

  /** An upload from a Blob or a web ReadableStream: `{ config, kind, from, base64, type }`. */
  async upload({ config, kind, from, base64, type }) {
    const bytes = bytesOf(base64);
    const file = from === 'blob' ? new Blob([bytes], { type }) : streamOf(bytes);
    const client = new OAClient(config);
    try {
      return await settle(client[UPLOADS[kind]](file));
    } finally {
      await client.close();
    }
  },

  /**
   * close() while a send is in flight (the test makes the fake hang it), then a call on the closed
   * client: how each ended, and how long close() took.
   */
  async close({ config, delayMs }) {
    const client = new OAClient(config);
    const inFlight = settle(client.sendText({ user_id: 'u-close', msg: 'in flight' }));
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const closed = await settle(client.close());
    const after = await settle(client.sendText({ user_id: 'u-close', msg: 'after close' }));
    return { ok: true, value: { inFlight: await inFlight, closed, after } };
  },
};

/**
 * The webhook receiver: it answers each text message with `echo: <text>` sent to its sender through
 * the client configured by `env` (OA_BASE_URL, OA_API_KEY, OA_API_SECRET).
 */
export function createReceiver(env) {
  const client = new OAClient({
    baseUrl: env.OA_BASE_URL,
    apiKey: env.OA_API_KEY,
    apiSecret: env.OA_API_SECRET,
  });
  return createFetchWebhookHandler({
    onEvent: async (event) => {
      if (!isMessageEvent(event)) return;
      await client.sendText({ user_id: event.data.From_Account, msg: `echo: ${getMessageText(event)}` });
    },
  });
}

/**
 * A receiver made when the module loads, as apps often make theirs, with `dedupe`: nothing it makes may
 * need a request (a Worker may not make random values outside one).
 */
const dedupedReceiver = createFetchWebhookHandler({ onEvent: () => {}, dedupe: true });

/**
 * The app: `POST /scenario/NAME` runs a scenario (from `scenarios` and `extra`), `POST /oa-webhook`
 * is the webhook receiver (`POST /oa-webhook-dedupe` the one made at load), `GET /ready` answers once
 * the app serves.
 */
export function createApp(env, extra = {}) {
  let receiver;
  const all = { ...scenarios, ...extra };
  return {
    async fetch(request) {
      const { pathname } = new URL(request.url);
      if (pathname === '/ready') return json({ ready: true });
      if (pathname === '/oa-webhook-dedupe') return dedupedReceiver(request);
      if (pathname === '/oa-webhook') {
        receiver ??= createReceiver(env);
        return receiver(request);
      }
      const name = pathname.startsWith('/scenario/') ? pathname.slice('/scenario/'.length) : '';
      const scenario = all[name];
      if (request.method !== 'POST' || !scenario) return json({ error: `no scenario ${pathname}` }, 404);
      try {
        return json(await scenario(await request.json()));
      } catch (error) {
        return json({ ok: false, error: describeError(error), crashed: true }, 500);
      }
    },
  };
}
