/**
 * The one choice every example makes: your OA account when OA_BASE_URL, OA_API_KEY and OA_API_SECRET
 * are all set, else the fake OA server of `oa-messaging/testing`, started in this process (no account,
 * no network). Not part of the SDK: in your code, `new OAClient()` reads the same three variables.
 *
 * Against your account the examples message OA_USER_ID (use your own user id). Against the fake,
 * OA_DEMO_TRANSCODE_MS sets how long an uploaded video stays in convert status (default 2000).
 */
import { OAClient, type OAClientOptions } from 'oa-messaging';
import { createMockServer, type MockServer, type MockServerOptions } from 'oa-messaging/testing';

const ACCOUNT_ENV = ['OA_BASE_URL', 'OA_API_KEY', 'OA_API_SECRET'] as const;

/** A client, where it points, and how to close what was opened. */
export interface Connection {
  client: OAClient;
  /** The fake OA server (what it received: `deliveries`, `uploads`), or `undefined` for your account. */
  mock: MockServer | undefined;
  /** Who receives the examples' messages: OA_USER_ID with your account, `user-1` on the fake. */
  userId: string;
  /** Closes the client, then the fake. */
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** More client options (never the key, secret or base URL: those come from the choice above). */
  client?: Omit<OAClientOptions, 'baseUrl' | 'apiKey' | 'apiSecret'>;
  /** Options of the fake, when it is used. */
  fake?: MockServerOptions;
}

export async function connect(options: ConnectOptions = {}): Promise<Connection> {
  const missing = ACCOUNT_ENV.filter((name) => !process.env[name]);
  if (missing.length === 0) return connectToAccount(options);
  if (missing.length < ACCOUNT_ENV.length) console.log(`(no ${missing.join(', ')}: not using your account)`);

  const transcodeMs = Number(process.env.OA_DEMO_TRANSCODE_MS);
  const mock = await createMockServer({
    ...(transcodeMs > 0 ? { transcodeMs } : {}),
    ...options.fake,
  });
  console.log(`No OA account configured: using the fake OA server at ${mock.url}`);
  const client = new OAClient({
    ...options.client,
    baseUrl: mock.url,
    apiKey: mock.apiKey,
    apiSecret: mock.apiSecret,
  });
  return {
    client,
    mock,
    userId: 'user-1',
    close: async () => {
      await client.close();
      await mock.close();
    },
  };
}

function connectToAccount(options: ConnectOptions): Connection {
  const userId = process.env.OA_USER_ID;
  if (!userId) {
    console.error('OA_USER_ID is not set: name the user (yourself) who should receive the examples.');
    process.exit(2);
  }
  // The key and secret come from the environment too; neither is ever printed.
  const client = new OAClient(options.client);
  console.log(`Using your OA account at ${new URL(process.env.OA_BASE_URL ?? '').origin}, user ${userId}`);
  return { client, mock: undefined, userId, close: () => client.close() };
}
