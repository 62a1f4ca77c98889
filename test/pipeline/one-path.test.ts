// One warm `sendText` goes down one short path: at most 7 files of src/. Two views of it: the stack at
// the moment the request reaches the dispatcher, and every function of src/ that runs at all during
// the call (V8's precise coverage, as the inspector reports it), so that a step added anywhere on the
// path (a helper the pipeline calls and returns from, a listener check, a schema refinement) counts.
import http from 'node:http';
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type DispatcherLike, OAClient } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';

const MAX_FILES = 7;
/** The getter through which vitest's module runner hands out an export: `() => { try { return x } catch {} }`. */
const LIVE_BINDING = /^\(\) => \{ try \{ return [\w$]+ \} catch \{\} \}$/;

let mock: MockServer | undefined;
let client: OAClient | undefined;
let server: http.Server | undefined;
const agent = new Agent();
afterEach(async () => {
  await client?.close();
  await mock?.close();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** The files of src/ named on a stack, in the order they first appear. */
function srcFiles(stack: string): string[] {
  const files = new Set<string>();
  for (const match of stack.matchAll(/\/src\/([\w/.-]+\.ts)/g)) files.add(`src/${match[1]}`);
  return [...files];
}

/** A server of the two endpoints a sendText needs, outside src/ so that none of its code is counted. */
async function plainServer(): Promise<string> {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const data =
        req.url === '/api/v2/public/auth/token'
          ? { access_token: 'a.b.c', refresh_token: 'r-1', token_type: 'Bearer', expires_in: '1h' }
          : 'success';
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ error: 0, message: 'success', data }));
    });
  });
  const listening = server;
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
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
    expect(files).toEqual(expect.arrayContaining(['src/core/undici-transport.ts', 'src/core/pipeline.ts']));
    expect(files.length, files.join(', ')).toBeLessThanOrEqual(MAX_FILES);
  });

  it('runs functions of at most 7 files of src/ during one warm sendText, whatever returns before the request leaves', async () => {
    // The client's defaults (its own Agent, its rate limiter), against a server that is not in src/.
    client = new OAClient({ baseUrl: await plainServer(), apiKey: 'key-123456', apiSecret: 'secret-123456' });
    const params = { user_id: 'u-1', msg: 'hello' };
    const session = new Session();
    session.connect();
    try {
      await session.post('Profiler.enable');
      await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
      await client.sendText(params); // cold: undici loaded, a login
      await client.sendText(params);
      // Taking the coverage resets the counts: the next take holds the warm call alone.
      await session.post('Profiler.takePreciseCoverage');
      expect(await client.sendText(params)).toBe('success');
      const { result } = await session.post('Profiler.takePreciseCoverage');
      // vitest's module runner reads an import through a getter of the exporting module (native ESM
      // reads the binding): such getters are the runner's, not a step of the path.
      await session.post('Debugger.enable');
      const entered = new Map<string, string[]>();
      for (const script of result) {
        const file = srcFiles(script.url)[0];
        if (!file) continue;
        const { scriptSource } = await session.post('Debugger.getScriptSource', {
          scriptId: script.scriptId,
        });
        const ran = script.functions.filter((fn) => {
          const range = fn.ranges[0];
          if (!range || range.count === 0) return false;
          return !LIVE_BINDING.test(scriptSource.slice(range.startOffset, range.endOffset));
        });
        if (ran.length > 0)
          entered.set(
            file,
            ran.map((fn) => fn.functionName || '(anonymous)'),
          );
      }
      const report = [...entered].map(([file, names]) => `${file}: ${names.join(', ')}`).join('\n');
      // The walk is real: the steps every call takes are among the files it saw.
      expect([...entered.keys()], report).toEqual(
        expect.arrayContaining(['src/client.ts', 'src/core/pipeline.ts', 'src/core/undici-transport.ts']),
      );
      expect(entered.size, report).toBeLessThanOrEqual(MAX_FILES);
    } finally {
      await session.post('Profiler.stopPreciseCoverage');
      await session.post('Debugger.disable');
      session.disconnect();
    }
  });
});
