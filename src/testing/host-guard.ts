/**
 * The fake server's defence against DNS rebinding: a page on another site whose name was made to
 * resolve to 127.0.0.1 reaches the fake with that name in `Host`, and could read the web inbox and
 * drive it (set its webhook URL, then make it post there). So every route answers only requests
 * addressed to a loopback name, to the host it was told to bind, or to its `publicUrl`; and a
 * state-changing request sent by a page of another site (its `Origin`) is refused too.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** `Host` as HTTP allows it: a name or IPv4 address, or a bracketed IPv6 address, and a port. */
const HOST_SYNTAX = /^(?:\[[0-9a-f:.]+\]|[^\s/\\@?#[\]:]+)(?::\d{1,5})?$/i;

const LOOPBACK_NAMES = new Set(['localhost', '[::1]']);
const LOOPBACK_V4 = /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/** The host name of `authority` as URLs normalise it (lower case, IPv4 in dotted form), if it is one. */
function hostnameOf(authority: string): string | undefined {
  if (!HOST_SYNTAX.test(authority)) return undefined;
  try {
    return new URL(`http://${authority}`).hostname.replace(/\.$/, '');
  } catch {
    return undefined;
  }
}

/** Which host names one fake server answers to. */
export class HostGuard {
  readonly #extra = new Set<string>();

  /** Also answers `host`, as given to `listen` (`::1` or `[::1]`, a name, an address). */
  allowBound(host: string): void {
    const authority = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    const name = hostnameOf(authority);
    if (name) this.#extra.add(name);
  }

  #allowed(name: string | undefined, publicUrl: string | undefined): boolean {
    if (name === undefined) return false;
    if (LOOPBACK_NAMES.has(name) || LOOPBACK_V4.test(name) || this.#extra.has(name)) return true;
    if (publicUrl === undefined) return false;
    try {
      return new URL(publicUrl).hostname.replace(/\.$/, '') === name;
    } catch {
      return false;
    }
  }

  /**
   * Answers (and returns `true`) when `req` is not for this server: 421 for another `Host`, 403 for a
   * request other than GET/HEAD from a page of another origin (`null` included). The body is left
   * unread and the connection closed.
   */
  refuse(req: IncomingMessage, res: ServerResponse, publicUrl: string | undefined): boolean {
    const host = req.headers.host;
    // HTTP/1.1 requires Host (node:http refuses a request without one); an HTTP/1.0 request may omit it
    // and no browser sends such a request.
    if (host !== undefined && !this.#allowed(hostnameOf(host), publicUrl)) {
      answer(req, res, 421, 'Misdirected request: this fake server answers only loopback host names');
      return true;
    }
    const origin = req.headers.origin;
    const method = req.method ?? 'GET';
    if (origin === undefined || method === 'GET' || method === 'HEAD') return false;
    let name: string | undefined;
    try {
      const url = new URL(origin);
      if (url.protocol === 'http:' || url.protocol === 'https:') name = hostnameOf(url.host);
    } catch {
      name = undefined; // `null`, or not a URL: not a page of this machine
    }
    if (this.#allowed(name, publicUrl)) return false;
    answer(req, res, 403, 'Forbidden: a page of another origin may not change this fake server');
    return true;
  }
}

function answer(req: IncomingMessage, res: ServerResponse, status: number, reason: string): void {
  req.resume();
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    connection: 'close',
  });
  res.end(req.method === 'HEAD' ? undefined : `${reason}\n`);
}
