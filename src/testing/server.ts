/** The fake OA API as a real node:http server on loopback. */

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorAnswer } from './answers.js';
import { FakeOA } from './fake.js';
import { HostGuard } from './host-guard.js';
import { type InboundMessage, type InboundMessageOptions, sendInboundMessage } from './inbound.js';
import { Inbox, isInboxPath } from './inbox/inbox.js';
import type { Delivery, FakeOAOptions, FakeOutcome, FakeRequest, RecordedRequest } from './types.js';
import { UPLOAD_RULES } from './uploads.js';

/** Options of {@link createMockServer}: those of the fake, and where to listen. */
export interface MockServerOptions extends FakeOAOptions {
  /** @default 0 (a free port) */
  port?: number | undefined;
  /**
   * The address to listen on. Whatever it is, the server answers only requests addressed (`Host`) to a
   * loopback name, to this host or to `publicUrl`'s (else 421), and refuses changes posted by pages of
   * other origins (403), so that a web page cannot read or drive it through DNS rebinding.
   * @default '127.0.0.1'
   */
  host?: string | undefined;
  /** Where the web inbox posts the replies typed in it; may also be set in the page. @default none */
  webhookUrl?: string | undefined;
  /**
   * Told of each API request once it has ended: answered, reset, or hung (`outcome: 'hang'`), with the
   * username of the account it acted on. The web inbox's own requests are not API requests.
   * `oa mock-server` prints a line for each.
   */
  onRequest?: ((request: RecordedRequest, account: string) => void) | undefined;
}

/** Options of {@link MockServer.say}: those of `sendInboundMessage`, where to post, what to wait for. */
export interface MockSayOptions extends Omit<InboundMessageOptions, 'from'> {
  /**
   * The account the user writes to, by username or api key (see `MockServerOptions.accounts`): the
   * event carries its `username`, and the replies are awaited among its deliveries.
   * @default the first account
   */
  account?: string | undefined;
  /** Where the webhook receiver listens. @default the mock's `webhookUrl` */
  webhookUrl?: string | undefined;
  /** How many messages to the user to wait for (sends, and broadcasts that reach the user). @default 1 */
  replies?: number | undefined;
  /** How long the post and the wait for the replies may take in all. @default 10_000 */
  timeoutMs?: number | undefined;
}

/** What {@link MockServer.connections} counts. */
export interface MockServerConnections {
  /** Every connection accepted since the server started. */
  accepted: number;
  /** The connections open now. */
  open: number;
}

/** Bodies larger than the largest upload plus room for the multipart envelope are refused with 413. */
const MAX_BODY_BYTES = Math.max(...Object.values(UPLOAD_RULES).map((r) => r.maxBytes)) + 1024 * 1024;

const TOO_LARGE = Symbol('too large');

function readBody(req: IncomingMessage): Promise<Buffer | typeof TOO_LARGE> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    req.on('data', (chunk: Buffer) => {
      total += chunk.length;
      // Past the limit, keep reading (to answer) but stop keeping.
      if (total <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(total > MAX_BODY_BYTES ? TOO_LARGE : Buffer.concat(chunks, total)));
    req.on('error', reject);
    req.on('close', () => {
      if (!req.complete) reject(new Error('the client closed the request'));
    });
  });
}

function drop(req: IncomingMessage): void {
  // A TCP reset where the platform allows it, as a crashing proxy or server would leave it.
  const socket = req.socket;
  if (typeof socket.resetAndDestroy === 'function' && !socket.destroyed) socket.resetAndDestroy();
  else socket.destroy();
}

async function serve(
  fake: FakeOA,
  inbox: Inbox,
  guard: HostGuard,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const receivedAt = fake.now();
  // Before anything is read or recorded: a request meant for another site gets nothing from here.
  if (guard.refuse(req, res, fake.publicUrl)) return;
  let body: Buffer | typeof TOO_LARGE;
  try {
    body = await readBody(req);
  } catch {
    return; // the client went away: no one to answer
  }
  const url = req.url ?? '/';
  const path = new URL(url, 'http://x').pathname;
  if (body !== TOO_LARGE && isInboxPath(path)) return inbox.serve(req, res, path, body);
  if (body === TOO_LARGE) {
    const answer = errorAnswer(413, 'PAYLOAD_TOO_LARGE', 'Request body too large', path, Date.now());
    res.writeHead(answer.status, { ...answer.headers, connection: 'close' }).end(answer.body);
    return;
  }
  const outcome = await fake.handle({
    method: req.method ?? 'GET',
    url,
    headers: req.headers,
    body,
    receivedAt,
  });
  if (outcome.type === 'respond') {
    // Like a real gateway, every answer carries an id to quote in a support request.
    res.writeHead(outcome.status, {
      'x-request-id': randomUUID(),
      ...outcome.headers,
      'content-length': outcome.body.byteLength,
    });
    res.end(outcome.body);
  } else if (outcome.type === 'reset') {
    drop(req);
  } else {
    await outcome.released;
    drop(req);
  }
}

/**
 * The fake OA API served over HTTP: every member of {@link FakeOA} (requests, deliveries, faults ...)
 * plus the address to point the SDK at. Create it with {@link createMockServer}.
 */
export class MockServer extends FakeOA {
  /** Where the web inbox posts replies typed in it; the page can change it. */
  webhookUrl: string | undefined;
  readonly #server: Server;
  readonly #inbox: Inbox;
  readonly #guard = new HostGuard();
  readonly #onRequest: ((request: RecordedRequest, account: string) => void) | undefined;
  readonly #afterRequest = new Set<() => void>();
  #url = '';
  #connectionsAccepted = 0;
  #connectionsOpen = 0;
  #closing: Promise<void> | undefined;

  /** Use {@link createMockServer}, which also starts listening. */
  constructor(options: MockServerOptions = {}) {
    super(options);
    this.webhookUrl = options.webhookUrl;
    this.#onRequest = options.onRequest;
    this.#inbox = new Inbox(this);
    this.#server = createServer((req, res) => {
      serve(this, this.#inbox, this.#guard, req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
    });
    this.#server.on('connection', (socket) => {
      this.#connectionsAccepted++;
      this.#connectionsOpen++;
      socket.once('close', () => this.#connectionsOpen--);
    });
  }

  /**
   * The TCP connections the server has taken, of every account and the web inbox: how many it
   * accepted since it started, and how many are open now. Shows how many sockets a client (or a pool
   * of clients) holds.
   */
  get connections(): MockServerConnections {
    return { accepted: this.#connectionsAccepted, open: this.#connectionsOpen };
  }

  /** Handles one request as {@link FakeOA.handle} does; open web inboxes see it arrive and end. */
  override async handle(request: FakeRequest): Promise<FakeOutcome> {
    // The record is pushed before the first await inside, so the page shows it in flight.
    const account = this.accountOf(request);
    const outcome = super.handle(request);
    const record = account.requests.at(-1);
    this.#inbox.changed();
    try {
      return await outcome;
    } finally {
      this.#inbox.changed();
      if (record) this.#onRequest?.(record, account.username);
      for (const notify of this.#afterRequest) notify();
    }
  }

  /**
   * Plays a user of the OA, for testing a bot or any receiver: posts `message` from `from` to the
   * webhook as the OA service would (`sendInboundMessage`), then waits until `replies` messages reached
   * that user after the post began, and resolves with them (as in `deliveries`). Rejects when the
   * receiver does not answer 2xx, or when the replies have not all come within `timeoutMs`, saying
   * what came. With several accounts, `options.account` says which one the user writes to.
   *
   * @example
   * ```ts
   * const mock = await createMockServer({ webhookUrl: `${receiver}/oa/webhook` });
   * const [reply] = await mock.say('user-1', 'order 42');
   * expect(reply?.items[0]).toMatchObject({ msg: 'Order 42 has shipped.' });
   * ```
   */
  async say(from: string, message: InboundMessage, options: MockSayOptions = {}): Promise<Delivery[]> {
    const { webhookUrl = this.webhookUrl, replies = 1, timeoutMs = 10_000, account, ...inbound } = options;
    if (!webhookUrl) throw new TypeError("mock.say needs a webhookUrl (an option, or the mock's webhookUrl)");
    const receiver = this.account(account);
    const deadline = Date.now() + timeoutMs;
    const { deliveries } = receiver;
    const start = deliveries.length;
    const to = () => deliveries.slice(start).filter((d) => d.recipients.includes(from));
    // The account's username unless the event is told otherwise (`username`, or `to` it defaults to).
    const username = inbound.username ?? (inbound.to === undefined ? receiver.username : undefined);
    const answer = await sendInboundMessage(webhookUrl, message, {
      ...inbound,
      ...(username === undefined ? {} : { username }),
      from,
      timeoutMs,
    });
    if (answer.status < 200 || answer.status > 299) {
      throw new Error(
        `mock.say: the receiver at ${webhookUrl} answered ${answer.status}: ${typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)}`,
      );
    }
    if (to().length >= replies) return to().slice(0, replies);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.#afterRequest.delete(check);
      };
      const check = () => {
        if (to().length < replies) return;
        done();
        resolve(to().slice(0, replies));
      };
      const timer = setTimeout(
        () => {
          done();
          const got = to().map((d) => d.endpoint);
          reject(
            new Error(
              `mock.say: ${got.length} of ${replies} replies to ${from} within ${timeoutMs} ms` +
                (got.length ? ` (${got.join(', ')})` : ''),
            ),
          );
        },
        Math.max(0, deadline - Date.now()),
      );
      this.#afterRequest.add(check);
    });
  }

  /** Open web inboxes show the change (a fault, a reset, transcodes that ended ...). */
  protected override changed(): void {
    this.#inbox.changed();
  }

  /** As {@link FakeOA.reset}; the replies typed in the web inbox are forgotten too. */
  override reset(): void {
    this.#inbox.clearReplies();
    super.reset();
  }

  /** The base URL to give the SDK as `baseUrl`, e.g. `http://127.0.0.1:54321`; its `/` is the web inbox. */
  get url(): string {
    return this.#url;
  }

  /** Starts listening; resolves once the port is known. Called by {@link createMockServer}. */
  async listen(port = 0, host = '127.0.0.1'): Promise<this> {
    this.#guard.allowBound(host);
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    const address = this.#server.address() as AddressInfo;
    const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    this.#url = `http://${shown}:${address.port}`;
    for (const account of this.accounts) account.publicUrl ??= this.#url;
    return this;
  }

  /** Stops the server: hung requests are dropped, open connections closed. Safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#inbox.close();
      this.releaseHungRequests();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
    return this.#closing;
  }
}

/**
 * Starts the fake OA API on loopback: tokens that expire, both rate limits, video tickets that convert,
 * `JOB_BUSY`, both error layouts, uploads whose files it serves, and injectable faults.
 *
 * @example
 * ```ts
 * const mock = await createMockServer();
 * const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
 * await client.sendText({ user_id: 'u1', msg: 'hi' });
 * expect(mock.deliveries).toHaveLength(1);
 * await mock.close();
 * ```
 */
export async function createMockServer(options: MockServerOptions = {}): Promise<MockServer> {
  return new MockServer(options).listen(options.port ?? 0, options.host ?? '127.0.0.1');
}
