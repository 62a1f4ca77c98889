/**
 * The web inbox of the fake OA server: the page at `/`, its state and live updates under `/_inbox/`,
 * the uploaded media it plays, replies posted to a webhook as a user, and faults switched on from the
 * page. None of these requests is recorded in `requests`: the timeline shows the SDK's traffic only.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FakeOA } from '../fake.js';
import { type InboundMessage, sendInboundMessage } from '../inbound.js';
import type { Fault, FaultOptions } from '../types.js';
import { INBOX_PAGE } from './page.js';
import { scrub } from './redact.js';
import { buildInboxState, type InboxReply, MEDIA_PREFIX } from './state.js';

/** The fake as the inbox reads it: its records plus the inbox's own settings. */
export type InboxSource = FakeOA & { webhookUrl: string | undefined };

/** Changes closer together than this reach the page as one update. */
const COALESCE_MS = 40;
const ANSWER_CHARS = 500;
const JOB_BUSY_INFO = 'A broadcast job is currently in progress';

/** The paths the inbox answers; every other one is the fake API's. */
export const isInboxPath = (path: string) =>
  path === '/' || path === '/favicon.ico' || path.startsWith('/_inbox/');

const json = (res: ServerResponse, status: number, body: unknown, secrets: string[]) => {
  const text = scrub(JSON.stringify(body), secrets);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(text);
};

/** The page's whole policy: nothing but this server, so nothing leaves the machine. */
const PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; connect-src 'self'; img-src 'self' data:; media-src 'self'; " +
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'; form-action 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};

function inboundMessage(kind: unknown, text: unknown): InboundMessage | undefined {
  if (kind === 'text' || kind === undefined)
    return typeof text === 'string' && text !== '' ? text : undefined;
  if (kind === 'image' || kind === 'video') return { type: kind };
  if (kind === 'audio') return { type: 'sound' };
  return undefined;
}

function faultFrom(body: Record<string, unknown>): { fault: Fault; options: FaultOptions } | string {
  const times = body.times === 'every' ? Number.POSITIVE_INFINITY : Number(body.times ?? 1);
  if (!(times >= 1)) return 'times must be 1 or more, or "every"';
  const options: FaultOptions = { times };
  switch (body.kind) {
    case 'rate-limit':
      return { fault: { kind: 'rate-limit' }, options };
    case 'error': {
      const status = Number(body.status ?? 500);
      if (!Number.isInteger(status) || status < 400 || status > 599) return 'status must be 400-599';
      return { fault: { kind: 'error', status }, options };
    }
    case 'job-busy':
      // JOB_BUSY is what the three mass broadcasts answer while a job runs.
      return {
        fault: { kind: 'error', status: 400, code: 'JOB_BUSY', info: JOB_BUSY_INFO },
        options: { ...options, path: /\/message\/broadcast-/ },
      };
    case 'delay': {
      const delayMs = Number(body.delayMs ?? 2000);
      if (!(delayMs >= 0 && delayMs <= 600_000)) return 'delayMs must be 0-600000';
      return { fault: { kind: 'delay', delayMs }, options };
    }
    case 'reset':
      return { fault: { kind: 'reset-after-processing' }, options };
    default:
      return 'kind must be rate-limit, error, job-busy, delay or reset';
  }
}

/** Serves one media file, with byte ranges (media elements seek with them). */
function serveMedia(req: IncomingMessage, res: ServerResponse, bytes: Uint8Array, type: string): void {
  const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
  const size = bytes.byteLength;
  const head = { 'content-type': type, 'accept-ranges': 'bytes', 'cache-control': 'no-store' };
  if (!range || (range[1] === '' && range[2] === '')) {
    res.writeHead(200, { ...head, 'content-length': size }).end(bytes);
    return;
  }
  const start = range[1] === '' ? Math.max(0, size - Number(range[2])) : Number(range[1]);
  const end = range[1] === '' || range[2] === '' ? size - 1 : Math.min(Number(range[2]), size - 1);
  if (start > end || start >= size) {
    res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
    return;
  }
  res
    .writeHead(206, {
      ...head,
      'content-range': `bytes ${start}-${end}/${size}`,
      'content-length': end - start + 1,
    })
    .end(bytes.subarray(start, end + 1));
}

/** The inbox of one mock server. */
export class Inbox {
  readonly #source: InboxSource;
  readonly #replies: InboxReply[] = [];
  /** Each open page's live stream, and the username of the account it shows. */
  readonly #streams = new Map<ServerResponse, string>();
  #timer: NodeJS.Timeout | undefined;

  /** The inbox of `source`, which calls {@link changed} whenever its records change. */
  constructor(source: InboxSource) {
    this.#source = source;
  }

  /** What the page shows now of an account (by username; the first by default). */
  state(account?: string) {
    return buildInboxState(this.#source, this.#replies, this.#source.webhookUrl ?? '', account);
  }

  /** Something the page shows changed: every open page gets the new state (coalesced). */
  changed(): void {
    if (this.#streams.size === 0 || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      // Built once per account shown, however many pages show it.
      const texts = new Map<string, string>();
      for (const [stream, account] of this.#streams) {
        const text = texts.get(account) ?? `data: ${this.#stateText(account)}\n\n`;
        texts.set(account, text);
        stream.write(text);
      }
    }, COALESCE_MS);
    this.#timer.unref();
  }

  /** Ends the live streams (the server is closing). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const stream of this.#streams.keys()) stream.end();
    this.#streams.clear();
  }

  /** Forgets the replies typed so far (the fake was reset). */
  clearReplies(): void {
    this.#replies.length = 0;
  }

  /** Answers a request for `/` or under `/_inbox/`. */
  async serve(req: IncomingMessage, res: ServerResponse, path: string, body: Buffer): Promise<void> {
    const method = req.method ?? 'GET';
    if (method === 'GET' || method === 'HEAD') return this.#get(req, res, path);
    if (method !== 'POST') return json(res, 405, { error: 'method not allowed' }, []);
    // A page elsewhere can post a form here, but not JSON (that needs a CORS preflight, never granted).
    if (!/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      return json(res, 415, { error: 'send JSON' }, []);
    }
    let payload: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(body.toString('utf8') || '{}');
      payload = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    } catch {
      return json(res, 400, { error: 'invalid JSON' }, []);
    }
    return this.#post(res, path, payload);
  }

  #secrets(): string[] {
    return this.#source.accounts.map((a) => a.apiSecret);
  }

  #stateText(account: string): string {
    return scrub(JSON.stringify(this.state(account)), this.#secrets());
  }

  /** The account a request of the page names (`account`, a username); the first when it names none. */
  #account(name: unknown): FakeOA | undefined {
    if (name === undefined || name === null || name === '') return this.#source.accounts[0];
    return this.#source.accounts.find((a) => a.username === name);
  }

  #get(req: IncomingMessage, res: ServerResponse, path: string): void {
    const named = new URL(req.url ?? '/', 'http://inbox.invalid').searchParams.get('account');
    const account = this.#account(named);
    if (!account) {
      json(res, 404, { error: `no account '${named}' in this fake` }, []);
      return;
    }
    if (path === '/') {
      res.writeHead(200, PAGE_HEADERS).end(req.method === 'HEAD' ? undefined : INBOX_PAGE);
      return;
    }
    // A browser asks for it whatever the page says; it is no request of the SDK's to record.
    if (path === '/favicon.ico') {
      res.writeHead(204).end();
      return;
    }
    if (path === '/_inbox/state') {
      json(res, 200, this.state(account.username), this.#secrets());
      return;
    }
    if (path === '/_inbox/events') {
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        connection: 'keep-alive',
      });
      res.write(`retry: 1000\ndata: ${this.#stateText(account.username)}\n\n`);
      this.#streams.set(res, account.username);
      req.on('close', () => this.#streams.delete(res));
      return;
    }
    if (path.startsWith(MEDIA_PREFIX)) {
      const upload = account.uploads[Number(path.slice(MEDIA_PREFIX.length))];
      if (upload) {
        serveMedia(req, res, upload.bytes, upload.contentType);
        return;
      }
    }
    json(res, 404, { error: 'not found' }, []);
  }

  async #post(res: ServerResponse, path: string, body: Record<string, unknown>): Promise<void> {
    const fake = this.#source;
    const account = this.#account(body.account);
    if (!account) {
      const names = fake.accounts.map((a) => a.username).join(', ');
      return json(res, 400, { error: `no account '${String(body.account)}' (the accounts: ${names})` }, []);
    }
    switch (path) {
      case '/_inbox/reply':
        return this.#reply(res, body, account);
      case '/_inbox/inbound':
        return this.#inbound(res, body, account);
      case '/_inbox/webhook': {
        const url = String(body.url ?? '');
        if (url !== '' && !/^https?:\/\/[^\s]+$/i.test(url)) {
          return json(res, 400, { error: 'an http(s) URL' }, []);
        }
        fake.webhookUrl = url === '' ? undefined : url;
        break;
      }
      case '/_inbox/faults': {
        const made = faultFrom(body);
        if (typeof made === 'string') return json(res, 400, { error: made }, []);
        account.injectFault(made.fault, made.options);
        break;
      }
      case '/_inbox/faults/clear':
        account.clearFaults();
        break;
      case '/_inbox/tokens/expire':
        account.expireAccessTokens();
        break;
      case '/_inbox/transcodes/complete':
        account.completeTranscodes();
        break;
      case '/_inbox/reset':
        // "Clear all": every account, and every reply typed.
        fake.reset();
        break;
      default:
        return json(res, 404, { error: 'not found' }, []);
    }
    this.changed();
    json(res, 200, { ok: true }, []);
  }

  /**
   * A message a user wrote that another process posted to a webhook (`oa inbound`): kept in that
   * user's conversation with what the receiver answered. `at` is when it was posted, so that it comes
   * before the replies it caused; one far from this fake's clock is taken as now.
   */
  #inbound(res: ServerResponse, body: Record<string, unknown>, account: FakeOA): void {
    const fake = this.#source;
    const user_id = typeof body.user_id === 'string' ? body.user_id : '';
    const kind = body.kind;
    const webhookUrl = typeof body.webhookUrl === 'string' ? body.webhookUrl : '';
    if (!user_id || !(kind === 'text' || kind === 'image' || kind === 'video' || kind === 'audio')) {
      json(res, 400, { error: 'user_id and a kind (text, image, video or audio)' }, []);
      return;
    }
    const now = fake.now();
    const at = typeof body.at === 'number' && Math.abs(body.at - now) < 60_000 ? body.at : now;
    const reply: InboxReply = { account: account.username, user_id, kind, at, webhookUrl };
    if (kind === 'text' && typeof body.text === 'string') reply.text = body.text;
    if (typeof body.status === 'number') reply.status = body.status;
    if (typeof body.answer === 'string') reply.answer = body.answer.slice(0, ANSWER_CHARS);
    if (typeof body.error === 'string') reply.error = body.error;
    this.#replies.push(reply);
    this.changed();
    json(res, 200, reply, this.#secrets());
  }

  async #reply(res: ServerResponse, body: Record<string, unknown>, account: FakeOA): Promise<void> {
    const fake = this.#source;
    const webhookUrl =
      typeof body.webhookUrl === 'string' && body.webhookUrl ? body.webhookUrl : fake.webhookUrl;
    const user_id = typeof body.user_id === 'string' ? body.user_id : '';
    const message = inboundMessage(body.kind, body.text);
    if (!webhookUrl)
      return json(res, 400, { error: 'no webhook URL: set one in the page or with --webhook' }, []);
    if (!user_id || !message)
      return json(res, 400, { error: 'user_id and a message (text, image, video or audio)' }, []);
    const kind = typeof message === 'string' ? 'text' : (body.kind as InboxReply['kind']);
    const reply: InboxReply = { account: account.username, user_id, kind, at: fake.now(), webhookUrl };
    if (typeof message === 'string') reply.text = message;
    this.#replies.push(reply);
    this.changed();
    try {
      const answer = await sendInboundMessage(webhookUrl, message, {
        from: user_id,
        username: account.username,
      });
      reply.status = answer.status;
      reply.answer =
        answer.text.length > ANSWER_CHARS ? `${answer.text.slice(0, ANSWER_CHARS)}…` : answer.text;
    } catch (error) {
      reply.error = error instanceof Error ? error.message : String(error);
    }
    this.changed();
    json(res, 200, reply, this.#secrets());
  }
}
