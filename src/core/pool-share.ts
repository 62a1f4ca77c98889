/**
 * One account's share of the connection pools that the accounts of `createAccounts` send through
 * (`maxConnectionsPerAccount`): at most that many of its requests in one origin's pool at once, the
 * rest waiting in line, in order, before the pool sees them. An account whose OA stops answering then
 * holds its share of the sockets, no more, and the other accounts still find one.
 */
import type { PreparedUpload, UploadBody, UploadProgress } from '../uploads/types.js';
import type { CallControl } from './call-control.js';
import { Fifo, type Queued } from './rate-limit.js';
import type {
  PoolShare,
  PoolShares,
  ShareWaiter,
  Transport,
  TransportRequest,
  TransportResponse,
} from './transport.js';

/** A request in line, with what lets it into the pool. */
interface Waiter extends ShareWaiter, Queued {
  readonly admit: () => void;
}

/** One account's share of one origin's pool. */
class Share implements PoolShare {
  readonly max: number;
  held = 0;
  /** Requests in line not given up: while there is one, a new request queues behind it. */
  #waiting = 0;
  readonly #line = new Fifo<Waiter>();

  constructor(max: number) {
    this.max = max;
  }

  take(): boolean {
    if (this.held >= this.max || this.#waiting > 0) return false;
    this.held++;
    return true;
  }

  wait(admit: () => void): ShareWaiter {
    const waiter: Waiter = { since: performance.now(), admit, done: false };
    this.#line.push(waiter);
    this.#waiting++;
    return waiter;
  }

  leave(given: ShareWaiter): void {
    const waiter = given as Waiter;
    if (waiter.done) return;
    waiter.done = true;
    this.#waiting--;
  }

  release(): void {
    const next = this.#line.shift();
    if (next === undefined) {
      this.held--;
      return;
    }
    // The place goes straight to the next request in line: `held` stays as it is.
    next.done = true;
    this.#waiting--;
    next.admit();
  }
}

/**
 * The transport of one account's client: the accounts' shared one, entered through the account's
 * share of its pools. Kept with the account's credentials, beyond its client, so that a client made
 * again for the account counts the requests still out through the one it replaces.
 */
export class AccountTransport implements Transport, PoolShares {
  readonly #shared: Transport;
  readonly #max: number;
  /** The origin of the account's first request, and its share of that origin's pool: most send to one. */
  #origin: string | undefined;
  #share: Share | undefined;
  /** Its shares of other origins' pools (credentials read again may name another base URL). */
  #others: Map<string, Share> | undefined;

  /** `max`: the most of the account's requests in one origin's pool at once. */
  constructor(shared: Transport, max: number) {
    this.#shared = shared;
    this.#max = max;
  }

  send(request: TransportRequest, control: CallControl | undefined): Promise<TransportResponse> {
    return this.#shared.send(request, control, this);
  }

  shareOf(origin: string): PoolShare {
    if (origin === this.#origin) return this.#share as Share;
    if (this.#origin === undefined) {
      this.#origin = origin;
      this.#share = new Share(this.#max);
      return this.#share;
    }
    this.#others ??= new Map();
    let share = this.#others.get(origin);
    if (share === undefined) {
      share = new Share(this.#max);
      this.#others.set(origin, share);
    }
    return share;
  }

  multipart(
    upload: PreparedUpload,
    onProgress: ((progress: UploadProgress) => void) | undefined,
  ): UploadBody | Promise<UploadBody> {
    return this.#shared.multipart(upload, onProgress);
  }

  /** Nothing of its own to release: `accounts.close()` closes the shared pools. */
  close(): Promise<void> {
    return Promise.resolve();
  }
}
