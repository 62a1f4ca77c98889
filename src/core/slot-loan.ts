import type { Permit } from './rate-limit.js';

/**
 * A rate-limit slot that a call waiting for a token may lend to the renewal it starts. The renewal's
 * login or refresh needs a slot too; if it had to queue for one while the calls waiting for it held
 * every slot, nothing would move. With the loan it goes at once, the calls that only wait keep their
 * slots (and send the moment the token is there), and only the lender queues again, ahead of the rest.
 */
export class SlotLoan {
  #permit: Permit | undefined;

  constructor(permit: Permit) {
    this.#permit = permit;
  }

  /** The renewal takes the slot, once; `undefined` when it was taken or reclaimed already. */
  lend(): Permit | undefined {
    const permit = this.#permit;
    this.#permit = undefined;
    return permit;
  }

  /** The lender takes its slot back: `true` when it was not lent, so it is still the lender's. */
  reclaim(): boolean {
    const held = this.#permit !== undefined;
    this.#permit = undefined;
    return held;
  }
}
