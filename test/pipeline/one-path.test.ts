// One warm `sendText` goes down one short path: the stack at the moment the request reaches the
// dispatcher names at most 7 files of src/. A dispatcher of our own captures the stack of the second
// call (the first loads undici and logs in) and hands the request on to a real undici Agent, to the
// fake OA server on loopback.
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type DispatcherLike, OAClient } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';

let mock: MockServer | undefined;
let client: OAClient | undefined;
const agent = new Agent();
afterEach(async () => {
  await client?.close();
  await mock?.close();
});

/** The files of src/ named on a stack, in the order they first appear. */
function srcFiles(stack: string): string[] {
  const files = new Set<string>();
  for (const match of stack.matchAll(/\/src\/([\w/.-]+\.ts)/g)) files.add(`src/${match[1]}`);
  return [...files];
}

describe('the path of one call', () => {
  it('passes through at most 7 files of src/ for one warm sendText', async () => {
    mock = await createMockServer({ rateLimit: false });
    const stacks: string[] = [];
    const dispatcher: DispatcherLike = {
      dispatch(options, handler) {
        if (options.path.endsWith('/webhook/broadcast-message')) {
          const limit = Error.stackTraceLimit;
          Error.stackTraceLimit = Number.POSITIVE_INFINITY;
          stacks.push(new Error('dispatch').stack ?? '');
          Error.stackTraceLimit = limit;
        }
        return agent.dispatch(options as never, handler as never);
      },
    };
    client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret, dispatcher });
    const params = { user_id: 'u-1', msg: 'hello' };
    await client.sendText(params);
    await client.sendText(params);
    expect(stacks).toHaveLength(2);
    const files = srcFiles(stacks[1] ?? '');
    // The request is on its way through the transport, called by the pipeline.
    expect(files).toEqual(expect.arrayContaining(['src/core/transport.ts', 'src/core/pipeline.ts']));
    expect(files.length, files.join(', ')).toBeLessThanOrEqual(7);
  });
});
