import { afterEach, expect, test } from 'vitest';
import { OAClient } from '../../src/index.js';
import { type AccountsServer, startAccountsServer } from '../accounts/accounts-server.js';

let server: AccountsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

test('a first call that logs in sends its request on the socket of the login: one socket, not two', async () => {
  server = await startAccountsServer([{ username: 'oa-1', apiKey: 'key-1', apiSecret: 'secret-1' }]);
  const client = new OAClient({ baseUrl: server.url, apiKey: 'key-1', apiSecret: 'secret-1' });
  await client.sendText({ user_id: 'u-1', msg: 'hello' });
  expect(server.accounts.get('oa-1')?.logins).toBe(1);
  expect(server.accounts.get('oa-1')?.sends).toHaveLength(1);
  expect(server.connections()).toBe(1);
  await client.close();
});
