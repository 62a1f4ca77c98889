/**
 * Many OA accounts in one service: one `OAClient` per account, made on demand from the caller's store
 * of credentials, kept while it is used (least recently used dropped beyond `maxClients`), sharing one
 * connection pool and one token store; inbound events routed to the client of their account.
 */
import * as z from 'zod/mini';
import { accountClient, type OAClient } from '../client.js';
import type { SharedClientParts } from '../core/context.js';
import { CREDENTIALS_TIMEOUT_MS, CredentialSource, type OACredentials } from '../core/credentials.js';
import { baseUrlOf, type OAClientOptions } from '../core/options.js';
import { AccountTransport } from '../core/pool-share.js';
import { sharedClientParts } from '../core/shared-pool.js';
import type { Transport } from '../core/transport.js';
import { OAConfigError } from '../errors.js';
import { ms } from '../schemas/client-options.js';
import {
  aFunction,
  aStringOfAtLeast,
  checkConfig,
  checked,
  optionsOf,
  positiveInteger,
  required,
} from '../schemas/option-checks.js';
import type { WebhookEvent } from '../webhook/schemas.js';

/**
 * Your store of connected accounts: the api key and secret of `account` (and its `baseUrl` when its
 * API is elsewhere than `clientOptions.baseUrl`), or `undefined`/`null` when there is no such account.
 * Called before the account's client first sends (once, however many calls wait), and again once
 * after its login was refused (a rotated secret). One that throws or does not answer within
 * `credentialsTimeoutMs` is an outage of your store: the call rejects with `OACredentialsError`
 * (nothing sent) and the next call asks again.
 */
export type AccountCredentialsResolver = (
  account: string,
) => OACredentials | undefined | null | Promise<OACredentials | undefined | null>;

/** What every account's client shares: any `OAClient` option but those naming one account. */
export type AccountClientOptions = Omit<OAClientOptions, 'apiKey' | 'apiSecret' | 'credentials' | 'account'>;

/** Options of {@link createAccounts}. */
export interface CreateAccountsOptions<E = WebhookEvent> {
  /** Where each account's api key and secret come from (see {@link AccountCredentialsResolver}). */
  credentials: AccountCredentialsResolver;
  /**
   * How long one lookup of `credentials` may take. A lookup that throws or has not answered by then
   * is an outage of your store, not a verdict on the account's calls: they reject with
   * `OACredentialsError` (`deliveryUnknown: false`, nothing sent), the next call asks again (a lookup
   * that never settles holds nothing for good), and outbox jobs of the account wait and are tried
   * again, never `failed`. Every wait for the credentials is bounded by it, also a call's without a
   * deadline.
   * @default clientOptions.credentialsTimeoutMs, else 10_000
   */
  credentialsTimeoutMs?: number | undefined;
  /**
   * The options of every account's client: `baseUrl`, `coordination` (then all processes share each
   * account's token pair and limits), `logger`, `rateLimit` (each account's own) ... With neither
   * `dispatcher` nor `fetch`, the clients share the accounts' connection pools (see `maxConnections`).
   * Without a `baseUrl` (nor `OA_BASE_URL`), each account's credentials must name theirs.
   * @default {} (the base URL from `OA_BASE_URL`)
   */
  clientOptions?: AccountClientOptions | undefined;
  /**
   * The account id of an inbound event, for {@link OAAccounts.forEvent}: map the OA username an event
   * names to your own ids here.
   * @default (event) => event.username
   */
  accountOf?: ((event: E) => string | undefined) | undefined;
  /**
   * How many clients are kept: beyond it, the least recently used one is dropped from the accounts
   * (never closed: a caller that still holds it, a bot handler's `ctx.client`, a variable, goes on
   * using it, and it is freed once nobody does). What is kept for its OA (token pair, limiter) is shared
   * with the account's next client, and its credentials stay with the accounts, so that client (a new
   * instance) neither logs in nor asks the resolver again.
   * @default 1000
   */
  maxClients?: number | undefined;
  /**
   * The secret each account's webhook path token is derived from (HMAC-SHA-256 of the account id):
   * see {@link OAAccounts.webhookPath}. Keep it as you keep an api secret; a new one changes every
   * account's path. At least 16 characters.
   * @default undefined (no webhook paths: `webhookPath` throws, and a webhook handler given these
   * accounts is refused when made)
   */
  webhookSecret?: string | undefined;
  /**
   * The most sockets the accounts' clients keep open to one base URL, all accounts together (each base
   * URL has its own pool). A request beyond waits for a free socket; the wait counts in its attempt's
   * `timeoutMs` and the call's deadline, and a send given up before it left is classed not sent
   * (`deliveryUnknown: false`), never sent later. With `clientOptions.dispatcher` (yours to size) or
   * `fetch`, unused; off Node, the runtime's `fetch` pools by itself.
   * @default 64
   */
  maxConnections?: number | undefined;
  /**
   * The most of one base URL's `maxConnections` sockets that one account's requests hold at once
   * (waiting in the pool for a socket counts). A request beyond waits, in order, for one of its
   * account's requests to end, before it enters the pool: that wait counts in its attempt's `timeoutMs`
   * and the call's deadline, and a request given up there was not sent (`deliveryUnknown: false`,
   * "not sent: ... waiting for a connection of the accounts' pool (this account holds 16 of its 16 ...)").
   * So an account whose OA stops answering holds its share of the sockets, no more: with `k` accounts
   * hanging, each on its whole share, `maxConnections - k * maxConnectionsPerAccount` sockets are left
   * to the others, so every other account still gets a socket while fewer than
   * `maxConnections / maxConnectionsPerAccount` accounts hang. The default keeps one for them while up
   * to three hang (with `maxConnections` of 4 or more), and lets one account use 16 of the default 64
   * sockets at once, more than its default rate limit (200 requests a minute) needs. At most
   * `maxConnections`; unused where `maxConnections` is.
   * @default a quarter of `maxConnections`, at least 1 (16 of the default 64, 2 of 8)
   */
  maxConnectionsPerAccount?: number | undefined;
}

/** The shortest `webhookSecret` taken: a shorter one could be found by trying secrets against one known path. */
const MIN_WEBHOOK_SECRET_LENGTH = 16;

/** The clients' options that name one account: the resolver gives each account its own. */
const ONE_ACCOUNT = 'must not be given (it names one account: the credentials resolver gives each its own)';

/**
 * What `createAccounts` takes, checked once by it (the rules every entry point uses). Made by the call
 * that checks: a schema built at the top of the module stays in the bundle of an app that never calls
 * createAccounts (the calls that build it count as side effects to a bundler, whatever annotation).
 */
const accountsOptionsSchema = () =>
  optionsOf(
    {
      credentials: required((v) => typeof v === 'function', 'must be a function of the account id'),
      clientOptions: z.optional(
        optionsOf(
          {
            apiKey: checked((v) => v === undefined, ONE_ACCOUNT),
            apiSecret: checked((v) => v === undefined, ONE_ACCOUNT),
            credentials: checked((v) => v === undefined, ONE_ACCOUNT),
            account: checked((v) => v === undefined, ONE_ACCOUNT),
          },
          'createAccounts: clientOptions must be an object of OAClient options',
        ),
      ),
      accountOf: aFunction,
      credentialsTimeoutMs: ms('above 0'),
      maxClients: positiveInteger,
      maxConnections: positiveInteger,
      maxConnectionsPerAccount: positiveInteger,
      webhookSecret: aStringOfAtLeast(MIN_WEBHOOK_SECRET_LENGTH),
    },
    'createAccounts needs { credentials }: a function that gives an account id its credentials',
  );

/** The accounts of {@link createAccounts}. */
export interface OAAccounts<E = WebhookEvent> {
  /**
   * The client of `account` (any non-empty string), synchronously: the same instance while it is kept.
   * Nothing is looked up or sent until its first call.
   * @example await accounts.client('shop-42').sendText({ user_id, msg });
   */
  client(account: string): OAClient;
  /**
   * The client of the account that received an inbound event: `client(accountOf(event))`. An event
   * naming no account throws `OAConfigError`.
   */
  forEvent(event: E): OAClient;
  /**
   * The account id of an inbound event, as the `accountOf` option gives it (by default its `username`);
   * `undefined` when it names none.
   */
  accountOf(event: E): string | undefined;
  /**
   * The webhook path of `account`: `/<account, URL-encoded>/<token>`, the token an unguessable
   * HMAC-SHA-256 of the account id under `webhookSecret` (43 characters, base64url). Append it to
   * your receiver's route and give the whole URL as that account's webhook: a handler given these
   * accounts (`createWebhookHandler({ accounts, onEvent })`) takes only requests whose path ends with
   * a valid one, and only events of that path's account. Without `webhookSecret`: `OAConfigError`.
   * @example const url = `https://hooks.example.com/oa${await accounts.webhookPath('shop-42')}`;
   */
  webhookPath(account: string): Promise<string>;
  /**
   * The account whose {@link OAAccounts.webhookPath} `path` ends with (a query is ignored), the token
   * compared in constant time; `undefined` for a path that ends with none (no token, a wrong one, no
   * `webhookSecret`). What the webhook handlers check; a receiver of its own may call it too.
   */
  webhookAccount(path: string): Promise<string | undefined>;
  /**
   * Whether these accounts have webhook paths: `true` when made with `webhookSecret`. A webhook
   * handler given accounts without them refuses them when it is made (`OAConfigError`), as no
   * request could reach an account.
   */
  readonly hasWebhookPaths: boolean;
  /** How many clients are kept now. */
  readonly size: number;
  /**
   * Closes every client (calls in flight through them reject), those dropped beyond `maxClients` and
   * still held included, what is kept for each OA (its limiter's timers) and the accounts' connection
   * pools. A single client's `close()` leaves the pools and the OA's state to the others: another
   * account id of the same OA goes on renewing its token with its own client.
   */
  close(): Promise<void>;
}

const byUsername = (event: unknown): string | undefined => {
  const username = (event as { username?: unknown } | null | undefined)?.username;
  return typeof username === 'string' ? username : undefined;
};

/**
 * Many OA accounts in one service (a helpdesk, CRM or shop platform whose customers each connect
 * their OA): one client per account, made on demand, its credentials read from your store when it
 * first needs them. Each account has its own token pair, rate limits, ready video tickets and upload
 * answers; with a `coordination` in `clientOptions`, every process shares them per account.
 * @example
 * const accounts = createAccounts({
 *   credentials: async (account) => db.findOaAccount(account), // { apiKey, apiSecret } | undefined
 *   clientOptions: { coordination, logger },
 * });
 * await accounts.client('shop-42').sendText({ user_id, msg });
 * createWebhookHandler({ onEvent: (event) => handle(accounts.forEvent(event), event) });
 */
export function createAccounts<E = WebhookEvent>(options: CreateAccountsOptions<E>): OAAccounts<E> {
  return new Accounts(options);
}

/** How many accounts' credentials are kept beyond their clients, per client kept (see `maxClients`). */
const CREDENTIALS_PER_CLIENT = 2;

/** What the accounts keep of an account beyond its client: what its next client takes over. */
interface KeptAccount {
  readonly credentials: CredentialSource;
  /** Its way into the shared transport, through its share of the pools (its requests out counted). */
  readonly transport: Transport;
}

class Accounts<E> implements OAAccounts<E> {
  readonly #resolve: AccountCredentialsResolver;
  readonly #accountOf: (event: E) => string | undefined;
  readonly #maxClients: number;
  readonly #shared: SharedClientParts;
  /** Each account's share of one origin's pool; `undefined`: no shares (the transport caps nothing, or the share is the whole pool). */
  readonly #connectionsPerAccount: number | undefined;
  /** Kept clients, least recently used first (a use moves a client to the end). */
  readonly #clients = new Map<string, OAClient>();
  /**
   * Each account's credentials and transport, least recently used first, kept beyond its client (to
   * twice `maxClients`): a client made again for an account asks no one, and counts in its share the
   * requests still out through the client it replaces.
   */
  readonly #kept = new Map<string, KeptAccount>();
  /**
   * Clients dropped beyond maxClients, held weakly: one a caller still holds keeps working (and is
   * closed by `close()`); one nobody holds is freed. Emptied of the freed ones as it grows.
   */
  #dropped = new Set<WeakRef<OAClient>>();
  readonly #credentialsTimeoutMs: number;
  /** The account used last: using it again moves nothing. */
  #newest: string | undefined;
  #closed = false;
  /** The HMAC key of `webhookSecret`, imported at its first use. */
  readonly #webhookKey: (() => Promise<CryptoKey>) | undefined;

  constructor(options: CreateAccountsOptions<E>) {
    checkConfig(accountsOptionsSchema(), options, 'createAccounts');
    const { maxClients = 1000, maxConnections = 64, clientOptions = {}, accountOf, webhookSecret } = options;
    this.#credentialsTimeoutMs =
      options.credentialsTimeoutMs ?? clientOptions.credentialsTimeoutMs ?? CREDENTIALS_TIMEOUT_MS;
    // A quarter: an account whose OA hangs holds at most that many sockets, so that up to three such
    // accounts still leave the others a quarter of the pool (see maxConnectionsPerAccount).
    const { maxConnectionsPerAccount = Math.max(1, Math.floor(maxConnections / 4)) } = options;
    if (maxConnectionsPerAccount > maxConnections) {
      throw new OAConfigError(
        `createAccounts: maxConnectionsPerAccount (${maxConnectionsPerAccount}) must not exceed maxConnections (${maxConnections})`,
      );
    }
    if (webhookSecret !== undefined) {
      let key: Promise<CryptoKey> | undefined;
      this.#webhookKey = () =>
        (key ??= crypto.subtle.importKey(
          'raw',
          new TextEncoder().encode(webhookSecret),
          { name: 'HMAC', hash: 'SHA-256' },
          false,
          ['sign'],
        ));
    }
    this.#resolve = options.credentials;
    this.#accountOf = accountOf ?? byUsername;
    this.#maxClients = maxClients;
    this.#shared = sharedClientParts(clientOptions, baseUrlOf(clientOptions.baseUrl), maxConnections);
    // A share of the whole pool would hold nothing back; a transport that does not cap its pools (a
    // caller's dispatcher or fetch, a runtime's fetch) has none to share.
    const capped = this.#shared.transport.connectionsPerOrigin !== undefined;
    this.#connectionsPerAccount =
      capped && maxConnectionsPerAccount < maxConnections ? maxConnectionsPerAccount : undefined;
  }

  get hasWebhookPaths(): boolean {
    return this.#webhookKey !== undefined;
  }

  get size(): number {
    return this.#clients.size;
  }

  client(account: string): OAClient {
    if (account === this.#newest) {
      const client = this.#clients.get(account);
      if (client) return client;
    }
    const kept = this.#clients.get(account);
    if (kept) {
      // The most recently used goes last: the first in the map is the one to drop.
      this.#clients.delete(account);
      this.#clients.set(account, kept);
      this.#newest = account;
      return kept;
    }
    return this.#make(account);
  }

  forEvent(event: E): OAClient {
    const account = this.accountOf(event);
    if (account === undefined) {
      throw new OAConfigError('forEvent: the event names no account (accountOf gave none)');
    }
    return this.client(account);
  }

  accountOf(event: E): string | undefined {
    const account = this.#accountOf(event);
    return typeof account === 'string' && account !== '' ? account : undefined;
  }

  async webhookPath(account: string): Promise<string> {
    if (typeof account !== 'string' || account === '') {
      throw new OAConfigError('accounts.webhookPath: the account must be a non-empty string');
    }
    if (!this.#webhookKey) {
      throw new OAConfigError('accounts.webhookPath needs createAccounts({ webhookSecret })');
    }
    return `/${encodeURIComponent(account)}/${await this.#token(this.#webhookKey, account)}`;
  }

  async webhookAccount(path: string): Promise<string | undefined> {
    if (!this.#webhookKey || typeof path !== 'string') return undefined;
    const parts = path.split('?')[0]?.split('/') ?? [];
    const given = parts.at(-1) ?? '';
    let account: string;
    try {
      account = decodeURIComponent(parts.at(-2) ?? '');
    } catch {
      return undefined; // not percent-encoding: no path of ours
    }
    if (account === '') return undefined;
    const expected = await this.#token(this.#webhookKey, account);
    // Constant time: every character compared whatever differs, so timing tells nothing of the token.
    let differ = given.length ^ expected.length;
    for (let i = 0; i < expected.length; i++) differ |= expected.charCodeAt(i) ^ given.charCodeAt(i);
    return differ === 0 ? account : undefined;
  }

  async #token(key: () => Promise<CryptoKey>, account: string): Promise<string> {
    const mac = new Uint8Array(
      await crypto.subtle.sign('HMAC', await key(), new TextEncoder().encode(account)),
    );
    return btoa(String.fromCharCode(...mac))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
  }

  async close(): Promise<void> {
    this.#closed = true;
    const dropped = [...this.#dropped].flatMap((ref) => ref.deref() ?? []);
    const clients = [...this.#clients.values(), ...dropped];
    this.#clients.clear();
    this.#dropped.clear();
    this.#kept.clear();
    this.#newest = undefined;
    await Promise.all(clients.map((client) => client.close()));
    this.#shared.states.close();
    await this.#shared.transport.close();
  }

  #make(account: string): OAClient {
    if (typeof account !== 'string' || account === '') {
      throw new OAConfigError('accounts.client: the account must be a non-empty string');
    }
    if (this.#closed) throw new OAConfigError(`accounts.client(${account}): the accounts are closed`);
    const { credentials, transport } = this.#keptOf(account);
    const client = accountClient({ shared: this.#shared, account, credentials, transport });
    this.#clients.set(account, client);
    this.#newest = account;
    while (this.#clients.size > this.#maxClients) {
      const [oldest, dropped] = this.#clients.entries().next().value as [string, OAClient];
      this.#clients.delete(oldest);
      this.#drop(dropped);
    }
    return client;
  }

  /**
   * The account's credentials and transport: those kept, else a new source that asks the resolver when
   * needed and a new share of the pools.
   */
  #keptOf(account: string): KeptAccount {
    let kept = this.#kept.get(account);
    if (kept) {
      this.#kept.delete(account);
    } else {
      const resolve = this.#resolve;
      const allowInsecureHttp = this.#shared.options.allowInsecureHttp;
      const { transport } = this.#shared;
      const perAccount = this.#connectionsPerAccount;
      kept = {
        credentials: new CredentialSource(
          undefined,
          () => resolve(account),
          account,
          allowInsecureHttp,
          this.#credentialsTimeoutMs,
        ),
        transport: perAccount === undefined ? transport : new AccountTransport(transport, perAccount),
      };
    }
    this.#kept.set(account, kept);
    while (this.#kept.size > this.#maxClients * CREDENTIALS_PER_CLIENT) {
      this.#kept.delete(this.#kept.keys().next().value as string);
    }
    return kept;
  }

  /**
   * Forgets a client dropped beyond `maxClients` without closing it: it owns no socket and no timer
   * (its OA's state and the pools are the accounts'), so whoever still holds it goes on using it, and
   * it is freed with the last reference. `close()` still reaches it while it is held.
   */
  #drop(client: OAClient): void {
    if (this.#dropped.size >= this.#maxClients) {
      this.#dropped = new Set([...this.#dropped].filter((ref) => ref.deref() !== undefined));
    }
    this.#dropped.add(new WeakRef(client));
  }
}
