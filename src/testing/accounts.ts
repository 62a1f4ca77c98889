/** The accounts of a fake that serves several (`FakeOAOptions.accounts`): checked, and each one's options. */
import type { FakeAccountOptions, FakeOAOptions } from './types.js';
import { TEST_API_KEY, TEST_API_SECRET, TEST_USERNAME } from './types.js';

const filled = (value: unknown) => typeof value === 'string' && value !== '';

/**
 * The fake's accounts, first one first: `accounts` checked (non-empty, each with a username, api key
 * and secret, no username or key twice), or the one account of `apiKey`, `apiSecret` and `username`.
 */
export function accountList(options: FakeOAOptions): FakeAccountOptions[] {
  const { accounts } = options;
  if (accounts === undefined) {
    return [
      {
        username: options.username ?? TEST_USERNAME,
        apiKey: options.apiKey ?? TEST_API_KEY,
        apiSecret: options.apiSecret ?? TEST_API_SECRET,
      },
    ];
  }
  if (options.apiKey !== undefined || options.apiSecret !== undefined || options.username !== undefined) {
    throw new TypeError('the fake takes accounts, or apiKey/apiSecret/username for one account: not both');
  }
  if (!Array.isArray(accounts) || accounts.length === 0) {
    throw new TypeError('accounts must be a non-empty array of { username, apiKey, apiSecret }');
  }
  accounts.forEach((account: FakeAccountOptions, i) => {
    if (!filled(account?.username) || !filled(account.apiKey) || !filled(account.apiSecret)) {
      throw new TypeError(`accounts[${i}] needs a username, an apiKey and an apiSecret (non-empty strings)`);
    }
    const earlier = accounts.slice(0, i);
    if (earlier.some((a) => a.username === account.username)) {
      throw new TypeError(`accounts[${i}]: the username '${account.username}' is given twice`);
    }
    // The key is what tells the accounts apart at login: one key, one account.
    if (earlier.some((a) => a.apiKey === account.apiKey)) {
      throw new TypeError(`accounts[${i}] (${account.username}): its apiKey is another account's`);
    }
  });
  return [...accounts];
}

/** The options of one account's fake: the shared ones, with the account's own over them. */
export function accountOptions(shared: FakeOAOptions, account: FakeAccountOptions): FakeOAOptions {
  const { accounts: _all, ...rest } = shared;
  return {
    ...rest,
    username: account.username,
    apiKey: account.apiKey,
    apiSecret: account.apiSecret,
    greeting: account.greeting !== undefined ? account.greeting : shared.greeting,
    knownUsers: account.knownUsers ?? shared.knownUsers,
    members: account.members ?? shared.members,
  };
}
