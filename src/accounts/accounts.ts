/**
 * Many OA accounts in one service: one `OAClient` per account, made on demand from the caller's store
 * of credentials, kept while it is used (least recently used dropped beyond `maxClients`), sharing one
 * connection pool and one token store; inbound events routed to the client of their account.
 */
import { accountClient, type OAClient, retireClient } from '../client.js';
import { MemoryTokenStore } from '../core/auth.js';
import type { SharedClientParts } from '../core/context.js';
import { CredentialSource, type OACredentials } from '../core/credentials.js';
import type { OAClientOptions } from '../core/options.js';
import { sharedClientParts } from '../core/shared-pool.js';
import { OAConfigError } from '../errors.js';
import type { WebhookEvent } from '../webhook/schemas.js';

/**
 * Your store of connected accounts: the api key and secret of `account` (and its `baseUrl` when its
 * API is elsewhere than `clientOptions.baseUrl`), or `undefined`/`null` when there is no such account.
 * Called before the account's client first sends (once, however many calls wait), and again once
 * after its login was refused (a rotated secret).
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
   * How many clients are kept: beyond it, the least recently used one is dropped, and closed (its
   * timers and limiter released) once its calls in flight have ended: none fails because of it. Its
   * token pair stays in the shared store and its credentials with the accounts, so the account's next
   * client (a new instance) neither logs in nor asks the resolver again.
   * @default 1000
   */
  maxClients?: number | undefined;
  /**
   * The most sockets the accounts' clients keep open to one base URL, all accounts together (each base
   * URL has its own pool). A request beyond waits for a free socket; the wait counts in its attempt's
   * `timeoutMs` and the call's deadline, and a send given up before it left is classed not sent
   * (`deliveryUnknown: false`), never sent later. With `clientOptions.dispatcher` (yours to size) or
   * `fetch`, unused.
   * @default 64
   */
  maxConnections?: number | undefined;
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
  /** How many clients are kept now. */
  readonly size: number;
  /**
   * Closes every client (calls in flight through them reject) and the accounts' connection pools. A
   * single client's `close()` leaves the pools to the others.
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

class Accounts<E> implements OAAccounts<E> {
  readonly #resolve: AccountCredentialsResolver;
  readonly #accountOf: (event: E) => string | undefined;
  readonly #maxClients: number;
  readonly #shared: SharedClientParts;
  /** Kept clients, least recently used first (a use moves a client to the end). */
  readonly #clients = new Map<string, OAClient>();
  /**
   * Each account's credentials, least recently used first, kept beyond its client (to twice
   * `maxClients`): a client made again for an account asks no one.
   */
  readonly #credentials = new Map<string, CredentialSource>();
  /** Clients dropped beyond maxClients, closing once their calls end. */
  readonly #retiring = new Set<OAClient>();
  /** The account used last: using it again moves nothing. */
  #newest: string | undefined;
  #closed = false;

  constructor(options: CreateAccountsOptions<E>) {
    if (typeof options?.credentials !== 'function') {
      throw new OAConfigError('createAccounts: credentials must be a function of the account id');
    }
    const { maxClients = 1000, maxConnections = 64, clientOptions = {}, accountOf } = options;
    if (!Number.isInteger(maxClients) || maxClients < 1) {
      throw new OAConfigError('createAccounts: maxClients must be a whole number from 1');
    }
    if (!Number.isInteger(maxConnections) || maxConnections < 1) {
      throw new OAConfigError('createAccounts: maxConnections must be a whole number from 1');
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
    this.#resolve = options.credentials;
    this.#accountOf = accountOf ?? byUsername;
    this.#maxClients = maxClients;
    // One in-memory store for every account (keyed by account): a dropped client's pair is not lost.
    const shareTokens = clientOptions.coordination === undefined && clientOptions.tokenStore === undefined;
    const shared = shareTokens ? { ...clientOptions, tokenStore: new MemoryTokenStore() } : clientOptions;
    const baseUrl = clientOptions.baseUrl ?? globalThis.process?.env?.OA_BASE_URL;
    this.#shared = sharedClientParts(shared, baseUrl, maxConnections);
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

  async close(): Promise<void> {
    this.#closed = true;
    const clients = [...this.#clients.values(), ...this.#retiring];
    this.#clients.clear();
    this.#retiring.clear();
    this.#credentials.clear();
    this.#newest = undefined;
    await Promise.all(clients.map((client) => client.close()));
    await this.#shared.transport.close();
  }

  #make(account: string): OAClient {
    if (typeof account !== 'string' || account === '') {
      throw new OAConfigError('accounts.client: the account must be a non-empty string');
    }
    if (this.#closed) throw new OAConfigError(`accounts.client(${account}): the accounts are closed`);
    const client = accountClient({
      shared: this.#shared,
      account,
      credentials: this.#credentialsOf(account),
    });
    this.#clients.set(account, client);
    this.#newest = account;
    while (this.#clients.size > this.#maxClients) {
      const [oldest, dropped] = this.#clients.entries().next().value as [string, OAClient];
      this.#clients.delete(oldest);
      this.#retire(dropped);
    }
    return client;
  }

  /** The account's credentials: those kept, else a new source that asks the resolver when needed. */
  #credentialsOf(account: string): CredentialSource {
    let source = this.#credentials.get(account);
    if (source) {
      this.#credentials.delete(account);
    } else {
      const resolve = this.#resolve;
      const allowInsecureHttp = this.#shared.options.allowInsecureHttp;
      source = new CredentialSource(undefined, () => resolve(account), account, allowInsecureHttp);
    }
    this.#credentials.set(account, source);
    while (this.#credentials.size > this.#maxClients * CREDENTIALS_PER_CLIENT) {
      this.#credentials.delete(this.#credentials.keys().next().value as string);
    }
    return source;
  }

  /** Closes a dropped client once its calls in flight have ended. */
  #retire(client: OAClient): void {
    this.#retiring.add(client);
    retireClient(client).then(
      () => this.#retiring.delete(client),
      () => this.#retiring.delete(client),
    );
  }
}
