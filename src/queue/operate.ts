/**
 * What an operator asks of an outbox, and does, one account at a time: which accounts are busy
 * (`accounts`), hold one and let it go again (`pause`, `resume`), stop its campaign or all its jobs not
 * started (`cancelAll`), empty the outbox (`drain`). Built on the turns' own keys (src/queue/outbox-redis/turns.ts)
 * and the outbox's `cancel`, one job at a time: a job is cancelled here as `cancel` cancels it.
 */
import type { Queue } from 'bullmq';
import { OAValidationError } from '../errors.js';
import type { RedisClient } from '../redis/client.js';
import type { OutboxCancelResult } from './campaign.js';
import { openKeys } from './campaign.js';
import type { OutboxCounts } from './events.js';
import { keyOfJobId } from './methods.js';
import { accountStates, forgetAccounts, holdAccount, knownAccounts, laneIds } from './outbox-redis/turns.js';
import type { OutboxAccountStatus, OutboxAccountsOptions } from './outbox-types.js';

/** What the operations need of their outbox. */
export interface OperateDeps {
  readonly redis: () => Promise<RedisClient>;
  readonly keyPrefix: string;
  readonly queue: () => Promise<Queue>;
  /** The outbox's own `cancel` of one key. */
  readonly cancel: (key: string, account: string | undefined) => Promise<OutboxCancelResult>;
}

/** How many cancels run at once: a campaign of 10,000 jobs is a few round trips deep, not 10,000. */
const CANCELS_AT_ONCE = 32;

/** `counts` of one account, from what `accountStates` read. */
export function countsOf(states: readonly number[]): OutboxCounts {
  const [waiting = 0, delayed = 0, active = 0, orphaned = 0, delivered = 0, failed = 0, unknown = 0] = states;
  const counts: OutboxCounts = { waiting, delayed, active, delivered, failed, unknown };
  if (orphaned > 0) counts.orphaned = orphaned;
  return counts;
}

/** Busiest first: most jobs waiting, delayed and active, then the one whose oldest job waited longest. */
export function byBusiest(a: OutboxAccountStatus, b: OutboxAccountStatus): number {
  const busy = (s: OutboxAccountStatus) => s.waiting + s.delayed + s.active;
  return busy(b) - busy(a) || (b.oldestWaitingMs ?? -1) - (a.oldestWaitingMs ?? -1);
}

/** `accounts({ top })`'s `top`, checked. */
export function checkTop(top: unknown): void {
  if (top !== undefined && !(Number.isInteger(top) && (top as number) > 0)) {
    throw new OAValidationError('accounts: top must be a positive integer', [
      { path: ['top'], message: 'must be a positive integer' },
    ]);
  }
}

/** `account`, checked: the operations act on one account, named. */
function accountOf(options: unknown, what: string): string {
  const account = (options as { account?: unknown } | null | undefined)?.account;
  if (typeof account !== 'string' || account === '') {
    throw new OAValidationError(`${what} needs { account }: a non-empty string (an account id)`, [
      { path: ['account'], message: 'must be a non-empty string' },
    ]);
  }
  return account;
}

/** Cancels `keys` (of `account`, or without one), a few at a time; how many were cancelled. */
async function cancelEach(
  deps: OperateDeps,
  keys: readonly string[],
  account: string | undefined,
): Promise<number> {
  let cancelled = 0;
  for (let i = 0; i < keys.length; i += CANCELS_AT_ONCE) {
    const results = await Promise.all(
      keys.slice(i, i + CANCELS_AT_ONCE).map((key) => deps.cancel(key, account)),
    );
    cancelled += results.filter((r) => r.cancelled).length;
  }
  return cancelled;
}

/** The operations of one outbox (one shard of it: `outbox-shards.ts` spreads them). */
export function operations(deps: OperateDeps) {
  /** Every job of `account` not started: in its lanes, then those admitted and not started yet. */
  const cancelAll = async (options: { account: string; bulk?: boolean | undefined }) => {
    const account = accountOf(options, 'cancelAll');
    const bulk = options.bulk;
    if (bulk !== undefined && typeof bulk !== 'boolean') {
      throw new OAValidationError('cancelAll: bulk must be true, false or undefined', [
        { path: ['bulk'], message: 'must be a boolean' },
      ]);
    }
    const redis = await deps.redis();
    const { behind, lanes } = await laneIds(redis, deps.keyPrefix, account, bulk);
    // The jobs behind a group's holder first: a holder cancelled before them would hand them its place.
    let cancelled = await cancelEach(deps, behind.map(keyOfJobId), account);
    cancelled += await cancelEach(deps, lanes.map(keyOfJobId), account);
    const parked = new Set([...behind, ...lanes]);
    // Admitted to BullMQ and not started yet (a few: at most the account's cap in flight).
    const queue = await deps.queue();
    const { open } = await accountStates(redis, deps.keyPrefix, queue, account, true);
    const admitted: string[] = [];
    for (const id of open) {
      if (parked.has(id)) continue;
      if (bulk !== undefined) {
        const job = await queue.getJob(id);
        if (((job?.data as { bulk?: unknown } | undefined)?.bulk === true) !== bulk) continue;
      }
      admitted.push(keyOfJobId(id));
    }
    cancelled += await cancelEach(deps, admitted, account);
    return { cancelled };
  };

  return {
    async accounts(options?: OutboxAccountsOptions): Promise<OutboxAccountStatus[]> {
      const top = options?.top;
      checkTop(top);
      const redis = await deps.redis();
      const queue = await deps.queue();
      const statuses: OutboxAccountStatus[] = [];
      const gone: string[] = [];
      for (const account of await knownAccounts(redis, deps.keyPrefix)) {
        const states = await accountStates(redis, deps.keyPrefix, queue, account);
        if (states.counts.every((n) => n === 0) && !states.held) {
          gone.push(account);
          continue;
        }
        statuses.push({
          account,
          ...countsOf(states.counts),
          paused: states.held,
          oldestWaitingMs: states.oldestWaitingMs,
        });
      }
      await forgetAccounts(redis, deps.keyPrefix, gone);
      statuses.sort(byBusiest);
      return top === undefined ? statuses : statuses.slice(0, top);
    },

    async pause(options: { account: string }): Promise<void> {
      await holdAccount(await deps.redis(), deps.keyPrefix, accountOf(options, 'pause'), true);
    },

    async resume(options: { account: string }): Promise<void> {
      await holdAccount(await deps.redis(), deps.keyPrefix, accountOf(options, 'resume'), false);
    },

    cancelAll,

    async drain(options?: { account?: string | undefined }): Promise<{ cancelled: number }> {
      if (options?.account !== undefined) return cancelAll({ account: accountOf(options, 'drain') });
      const redis = await deps.redis();
      let cancelled = 0;
      for (const account of await knownAccounts(redis, deps.keyPrefix)) {
        cancelled += (await cancelAll({ account })).cancelled;
      }
      // The jobs added without an account: `cancel` leaves an active one to end.
      cancelled += await cancelEach(deps, await openKeys(await deps.queue()), undefined);
      return { cancelled };
    },
  };
}
