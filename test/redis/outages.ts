/**
 * Four ways Redis stops answering, for the tests of how long the SDK waits on it: paused (it takes
 * commands and does not run them; `CLIENT PAUSE ... WRITE`, and `... ALL`, which holds every command),
 * stopped (connections refused), and black-holed (a loopback server that accepts connections and never
 * writes a byte, as a host gone without closing the connection).
 */
import { createServer, type Socket } from 'node:net';
import type { Redis } from 'ioredis';
import type { RedisServer } from './redis-server.js';

/** One outage of `server`: where the SDK under test connects, and how the outage begins and ends. */
export interface Outage {
  /** The URL the SDK under test is given. */
  readonly url: string;
  /** Redis stops answering from now. */
  begin(): Promise<void>;
  /** Redis answers again (for `black-holed`: the silent server is closed). */
  end(): Promise<void>;
  /** `false` for `black-holed`: its URL never leads to Redis. */
  readonly comesBack: boolean;
}

export type OutageName = 'paused' | 'paused-all' | 'stopped' | 'black-holed';
export const OUTAGES: readonly OutageName[] = ['paused', 'paused-all', 'stopped', 'black-holed'];

/** How long a `paused-all` outage lasts unless the test says: past the 3.5 s a webhook may take. */
const ALL_PAUSE_MS = 6_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server on 127.0.0.1 that accepts every connection and never writes to it. */
async function startSilentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    // Reads what it is sent and never answers.
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    url: `redis://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * The outage `name` of `server`; `admin` is a connection of the test's own. `paused` is a `WRITE`
 * pause (every script call waits; INFO and `CLIENT UNPAUSE` still run), so that the test can end it.
 * `paused-all` is an `ALL` pause, as an operator's or a failover's: Redis 7.0 holds the `CLIENT
 * UNPAUSE` too, so it lasts `allPauseMs` (longer than the test waits on the SDK under it, else Redis
 * would answer first) and `end()` waits for it to run out.
 */
export async function outage(
  name: OutageName,
  server: RedisServer,
  admin: Redis,
  { allPauseMs = ALL_PAUSE_MS }: { allPauseMs?: number } = {},
): Promise<Outage> {
  if (name === 'paused-all') {
    let until: number | undefined;
    return {
      url: server.url,
      comesBack: true,
      begin: async () => {
        await admin.call('CLIENT', 'PAUSE', String(allPauseMs), 'ALL');
        until = Date.now() + allPauseMs;
      },
      end: async () => {
        if (until === undefined) return;
        await sleep(until - Date.now());
        until = undefined;
        // Answered once Redis runs commands again.
        await admin.ping();
      },
    };
  }
  if (name === 'paused') {
    return {
      url: server.url,
      comesBack: true,
      begin: async () => {
        await admin.call('CLIENT', 'PAUSE', '120000', 'WRITE');
      },
      end: async () => {
        await admin.call('CLIENT', 'UNPAUSE');
      },
    };
  }
  if (name === 'stopped') {
    let down = false;
    return {
      url: server.url,
      comesBack: true,
      begin: async () => {
        down = true;
        // The test's own connection reconnects by itself; its failures meanwhile are expected.
        admin.on('error', () => {});
        await server.shutdown();
      },
      end: async () => {
        if (down) await server.start();
        down = false;
      },
    };
  }
  const silent = await startSilentServer();
  return {
    url: silent.url,
    comesBack: false,
    begin: async () => {},
    end: () => silent.close(),
  };
}
