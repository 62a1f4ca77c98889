// Run as a child process by isolation.test.ts: start the fake, leave requests hanging, close it, and
// check that nothing keeps the process alive (the parent sees it exit by itself).
import { Agent, request } from 'undici';
import { createMockServer } from '../../src/testing/index.js';

const mock = await createMockServer({ transcodeMs: 60_000, broadcastJobMs: 60_000 });
const agent = new Agent();
const token = mock.issueTokenPair().access_token;
const call = (msg: string) =>
  request(`${mock.url}/api/v2/public/webhook/broadcast-message`, {
    method: 'POST',
    dispatcher: agent,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ user_id: 'u1', msg }),
  }).then((res) => res.body.text());

await call('answered');
mock.injectFault('hang', { times: 2 });
const hung = Promise.allSettled([call('hung 1'), call('hung 2')]);
while (mock.requests.length < 3) await new Promise((resolve) => setTimeout(resolve, 5));
await mock.close();
await hung;
await agent.close();
// Closed handles leave the list on the next turn of the event loop.
await new Promise((resolve) => setTimeout(resolve, 50));
const handles = (process as unknown as { _getActiveHandles(): { constructor?: { name?: string } }[] })
  ._getActiveHandles()
  .filter((h) => !(h as { _isStdio?: boolean })._isStdio);
console.log(`handles after close: ${handles.length}`);
if (handles.length > 0) {
  console.log(handles.map((h) => h.constructor?.name));
  process.exitCode = 3;
}
