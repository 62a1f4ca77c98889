import { afterEach, describe, expect, it, vi } from 'vitest';
import { OAClient } from '../../src/index.js';
import { createMockServer, type MockServer } from '../../src/testing/index.js';

let mock: MockServer | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  await mock?.close();
  mock = undefined;
});

/** One send through a fresh client, as configured, then closed. */
async function sendOne(options: ConstructorParameters<typeof OAClient>[0] = {}) {
  mock ??= await createMockServer();
  const client = new OAClient({
    baseUrl: mock.url,
    apiKey: mock.apiKey,
    apiSecret: mock.apiSecret,
    ...options,
  });
  await client.sendText({ user_id: 'u-1', msg: 'hi' });
  await client.close();
}

const lines = (spy: { mock: { calls: unknown[][] } }) => spy.mock.calls.map((call) => call[0]);

describe('OA_LOG (as OPENAI_LOG): logging from the environment', () => {
  it('OA_LOG=debug logs each request and answer to the console, with no code change', async () => {
    vi.stubEnv('OA_LOG', 'debug');
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    await sendOne();
    expect(lines(debug)).toContainEqual(
      expect.stringMatching(/^oa-messaging: POST \/api\/v2\/public\/webhook\/broadcast-message -> 2\d\d$/),
    );
    expect(JSON.stringify(debug.mock.calls)).not.toContain(mock?.apiSecret);
  });

  it('without OA_LOG the client is silent', async () => {
    vi.stubEnv('OA_LOG', '');
    const spies = (['debug', 'info', 'warn', 'error'] as const).map((level) =>
      vi.spyOn(console, level).mockImplementation(() => {}),
    );
    await sendOne();
    for (const spy of spies) expect(spy).not.toHaveBeenCalled();
  });

  it('filters a logger of yours: OA_LOG=warn keeps its debug lines out; logLevel wins over OA_LOG', async () => {
    vi.stubEnv('OA_LOG', 'warn');
    const logger = { debug: vi.fn(), warn: vi.fn() };
    await sendOne({ logger });
    expect(logger.debug).not.toHaveBeenCalled();
    await sendOne({ logger, logLevel: 'debug' });
    expect(lines(logger.debug)).toContainEqual(
      expect.stringMatching(/^oa-messaging: POST \/api\/v2\/public\/webhook\/broadcast-message -> 2\d\d$/),
    );
  });

  it('an OA_LOG it does not know is reported once and ignored; a wrong logLevel is refused', async () => {
    vi.stubEnv('OA_LOG', 'verbose');
    const warning = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    await sendOne();
    expect(warning).toHaveBeenCalledWith(expect.stringContaining('OA_LOG=verbose'), 'OALogWarning');
    expect(
      () =>
        new OAClient({
          baseUrl: 'https://x.example',
          apiKey: 'k',
          apiSecret: 'secret-abcdef',
          logLevel: 'loud' as never,
        }),
    ).toThrow(/logLevel must be one of debug, info, warn, error, off/);
  });
});
