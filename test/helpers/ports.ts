/**
 * Loopback ports for the tests' servers, and for the "nothing listens here" of a refused connection.
 * Each is below the ports the kernel gives outgoing connections, and random among about 20,000: a port
 * freed by a test cannot be taken by a connection meanwhile, and two tests (or two files running side by
 * side) hardly ever draw the same. A port that was free "a moment ago" from `listen(0)` has neither
 * guarantee: the next `listen(0)` anywhere on the machine may get it.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * The lowest port the kernel gives an outgoing connection. A server of the tests listens below it: when
 * a test stops it and starts it again on its port (an outage), no client's connection can have taken
 * that port meanwhile.
 */
function firstEphemeralPort(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12_000) return low;
  } catch {}
  return 32_768;
}
const PORTS = { from: 10_000, to: firstEphemeralPort() };

/** Listens on `port` (0: any) of loopback for a moment: the port it got, or undefined if it was taken. */
function probePort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(undefined));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const got = typeof address === 'object' && address ? address.port : undefined;
      server.close(() => resolve(got));
    });
  });
}

/**
 * A loopback port nothing listens on (a connection to it is refused), free when it resolves: one below
 * the ports of outgoing connections (see {@link firstEphemeralPort}), else any.
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 20; i++) {
    const port = await probePort(PORTS.from + Math.floor(Math.random() * (PORTS.to - PORTS.from)));
    if (port !== undefined) return port;
  }
  const any = await probePort(0);
  if (any === undefined) throw new Error('no free loopback port');
  return any;
}
