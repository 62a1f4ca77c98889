/**
 * Many OA accounts in one service: one `OAClient` per account, made on demand from the caller's store
 * of credentials, kept while it is used (least recently used dropped beyond `maxClients`), sharing one
 * connection pool and one token store; inbound events routed to the client of their account.
 */
import { OAClient } from '../client.js';
import { MemoryTokenStore } from '../core/auth.js';
import type { OACredentials } from '../core/credentials.js';
import type { OAClientOptions } from '../core/options.js';
import { SharedPool } from '../core/shared-pool.js';
import { OAConfigError } from '../errors.js';
import type { WebhookEvent } from '../webhook/schemas.js';

/**
 * Your store of connected accounts: the api key and secret of `account`, or `undefined`/`null` when
 * there is no such account. Called when the account's client first logs in (once, however many calls
 * wait), and again once after its login was refused (a rotated secret).
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
   * The options of every account's client: `baseUrl`, `coordination` (then all processes share each
   * account's token pair and limits), `logger`, `rateLimit` (each account's own) ... With neither
   * `dispatcher` nor `fetch`, the clients share one connection pool.
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
   * How many clients are kept: beyond it, the least recently used one is dropped. A dropped client
   * holds no socket (the pool is shared) and its token pair stays in the shared store, so the
   * account's next client logs in no sooner; calls already made through it finish.
   * @default 1000
   */
  maxClients?: number | undefined;
  /**
   * The secret each account's webhook path token is derived from (HMAC-SHA-256 of the account id):
   * see {@link OAAccounts.webhookPath}. Keep it as you keep an api secret; a new one changes every
   * account's path. At least 16 characters.
   * @default undefined (no webhook paths: `webhookPath` throws, and a webhook handler given these
   * accounts refuses every request)
   */
  webhookSecret?: string | undefined;
}

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
  /** How many clients are kept now. */
  readonly size: number;
  /** Closes every kept client (calls in flight through them reject) and the shared connection pool. */
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

class Accounts<E> implements OAAccounts<E> {
  readonly #resolve: AccountCredentialsResolver;
  readonly #accountOf: (event: E) => string | undefined;
  readonly #maxClients: number;
  readonly #shared: AccountClientOptions;
  readonly #pool: SharedPool | undefined;
  /** Kept clients, least recently used first (a use moves a client to the end). */
  readonly #clients = new Map<string, OAClient>();
  /** The account used last: using it again moves nothing. */
  #newest: string | undefined;
  #closed = false;
  /** The HMAC key of `webhookSecret`, imported at its first use. */
  readonly #webhookKey: (() => Promise<CryptoKey>) | undefined;

  constructor(options: CreateAccountsOptions<E>) {
    if (typeof options?.credentials !== 'function') {
      throw new OAConfigError('createAccounts: credentials must be a function of the account id');
    }
    const { maxClients = 1000, clientOptions = {}, accountOf } = options;
    if (!Number.isInteger(maxClients) || maxClients < 1) {
      throw new OAConfigError('createAccounts: maxClients must be a whole number from 1');
    }
    if (accountOf !== undefined && typeof accountOf !== 'function') {
      throw new OAConfigError('createAccounts: accountOf must be a function of an inbound event');
    }
    for (const name of ['apiKey', 'apiSecret', 'credentials', 'account'] as const) {
      if ((clientOptions as OAClientOptions)[name] !== undefined) {
        throw new OAConfigError(
          `createAccounts: clientOptions.${name} names one account; the credentials resolver gives each its own`,
        );
      }
    }
    const { webhookSecret } = options;
    if (webhookSecret !== undefined && (typeof webhookSecret !== 'string' || webhookSecret.length < 16)) {
      throw new OAConfigError('createAccounts: webhookSecret must be a string of at least 16 characters');
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
    const ownPool = clientOptions.dispatcher === undefined && clientOptions.fetch === undefined;
    this.#pool = ownPool ? new SharedPool() : undefined;
    // One in-memory store for every account (keyed by account): a dropped client's pair is not lost.
    const shareTokens = clientOptions.coordination === undefined && clientOptions.tokenStore === undefined;
    this.#shared = shareTokens ? { ...clientOptions, tokenStore: new MemoryTokenStore() } : clientOptions;
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
    const account = this.#accountOf(event);
    if (typeof account !== 'string' || account === '') {
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
    const clients = [...this.#clients.values()];
    this.#clients.clear();
    this.#newest = undefined;
    await Promise.all(clients.map((client) => client.close()));
    await this.#pool?.close();
  }

  #make(account: string): OAClient {
    if (typeof account !== 'string' || account === '') {
      throw new OAConfigError('accounts.client: the account must be a non-empty string');
    }
    if (this.#closed) throw new OAConfigError(`accounts.client(${account}): the accounts are closed`);
    const pool = this.#pool;
    const resolve = this.#resolve;
    const client = new OAClient({
      ...this.#shared,
      ...(pool?.dispatcher ? { dispatcher: pool.dispatcher } : {}),
      account,
      credentials: async () => {
        const answer = await resolve(account);
        // The first request of a client made before the shared pool was ready waits for it here.
        await pool?.ready();
        return answer;
      },
    });
    this.#clients.set(account, client);
    this.#newest = account;
    // Dropped, not closed: a call in flight through it finishes (it holds no socket of its own).
    while (this.#clients.size > this.#maxClients) {
      const oldest = this.#clients.keys().next().value as string;
      this.#clients.delete(oldest);
    }
    return client;
  }
}
