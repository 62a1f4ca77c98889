/**
 * Four sends against a limiter of three per 20 s, each with timeoutMs 2000 (not less: on a loaded
 * machine the login and the first sends take a while): the fourth times out in the queue. The script
 * does not close the client: it must still end at once, not a window later.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OAClient } from '../../../src/index.js';
import { tokenPair } from '../../helpers/tokens.js';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const body = req.url?.endsWith('/auth/token') ? { data: tokenPair(1) } : { data: 'success' };
    res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const client = new OAClient({
  baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
  apiKey: 'k-123456',
  apiSecret: 's-abcdef',
  rateLimit: { general: { max: 3, windowMs: 20_000 } },
});
const results = await Promise.allSettled(
  [1, 2, 3, 4].map((i) => client.sendText({ user_id: `u${i}`, msg: 'hi' }, { timeoutMs: 2000 })),
);
console.log(results.map((r) => r.status).join(' '));
server.close();
server.closeAllConnections();
