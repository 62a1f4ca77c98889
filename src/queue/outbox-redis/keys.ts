/**
 * Every key of an outbox's own, in one place: all under `<queue prefix>oa:` (the queue's prefix, so
 * that a hash tag in it keeps each script on one slot of a Redis Cluster), none of them a key BullMQ
 * owns. BullMQ's keys are only read, by the names its public `Queue.toKey` gives.
 *
 * None ends in a part BullMQ's `removeOrphanedJobs` takes for a job's (`:lock`, `:logs`, `:failed`,
 * `:processed`, `:dependencies`, `:unsuccessful` right after `oa:`), so its scan never removes one.
 */

/** The BullMQ job id of an outbox's anchor: a job BullMQ keeps delayed for years (see `anchor.ts`). */
export const ANCHOR_ID = 'oa-anchor';

/** The outbox-wide keys of each queue prefix seen, made once: every job's end reads a few. */
const outboxKeysOf = new Map<string, ReturnType<typeof makeOutboxKeys>>();

/** The outbox-wide keys, under the queue's prefix (`bull:<name>:`). */
export function outboxKeys(keyPrefix: string) {
  let keys = outboxKeysOf.get(keyPrefix);
  if (keys === undefined) {
    // A process serves a few queues: bounded all the same.
    if (outboxKeysOf.size >= 256) outboxKeysOf.clear();
    keys = makeOutboxKeys(keyPrefix);
    outboxKeysOf.set(keyPrefix, keys);
  }
  return keys;
}

function makeOutboxKeys(keyPrefix: string) {
  const base = `${keyPrefix}oa:`;
  return Object.freeze({
    /** The accounts with work, scored by when each may next be served (ms). */
    ready: `${base}ready`,
    /** Every parked job (its id, scored as in its lane): what `counts` reads as waiting or delayed. */
    parked: `${base}parked`,
    /** Where the accounts' keys start: `accountKeys` adds the account. */
    accountBase: `${base}acct:`,
    /** Every account that stored a job, scored by when it first did: what `outbox.accounts()` lists. */
    accounts: `${base}accounts`,
    /** The jobs that ended `unknown`, scored by when. */
    unknown: `${base}unknown`,
    /** Jobs admitted to their turn and being handed to BullMQ (`Queue.addBulk`), scored by when. */
    handing: `${base}handing`,
    /** Set once the queue's anchor job was added: its absence after that says the queue was obliterated. */
    anchored: `${base}anchored`,
    /** The outcome events of the outbox's jobs (a stream: `outbox.on` reads it in every process). */
    events: `${base}events`,
    /** Where each job's own record starts: `recordKey` adds the job id. */
    recordBase: `${base}job:`,
  });
}

/** The outbox's own record of job `id` (see record.ts). */
export function recordKey(keyPrefix: string, id: string): string {
  return `${keyPrefix}oa:job:${id}`;
}

/** An account's member in `ready`, and the part of its keys that names it. */
export function accountTag(account: string): string {
  return encodeURIComponent(account);
}

/** The part of an order group's keys that names it (no `:`: `groups` values are `<lane>:<group>`). */
export function groupTag(group: string): string {
  return encodeURIComponent(group);
}

/**
 * The keys of one account. Scripts join `accountBase .. tag .. ':' .. name` the same way. Each key is
 * made when it is read: a job's end reads one or two of them.
 */
export function accountKeys(keyPrefix: string, account: string): AccountKeys {
  return new AccountKeys(`${outboxKeys(keyPrefix).accountBase}${accountTag(account)}:`);
}

/** The keys of one account (see {@link accountKeys}). */
export class AccountKeys {
  /** `base`: the account's base, the order groups' keys are made from it in the scripts (`ORDER`). */
  constructor(readonly base: string) {}
  get lane(): string {
    return `${this.base}lane`;
  }
  get bulk(): string {
    return `${this.base}bulk`;
  }
  get inflight(): string {
    return `${this.base}inflight`;
  }
  /** Every job of the account kept (for `counts` and `waitFor('all')` of one account). */
  get jobs(): string {
    return `${this.base}jobs`;
  }
  get pause(): string {
    return `${this.base}pause`;
  }
  /** Set by an operator (`outbox.pause({ account })`) until `resume`: none of its jobs starts. */
  get held(): string {
    return `${this.base}held`;
  }
  /** The jobs waiting behind their order group's holder, scored as in a lane. */
  get queued(): string {
    return `${this.base}queued`;
  }
}
