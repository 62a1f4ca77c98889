/**
 * The headers each request carries: built once per client (and once per token for the bearer), so
 * that the hot path spreads no object per call.
 */
import { OAConfigError } from '../errors.js';
import { VERSION } from '../version.js';

/** Your application, as the User-Agent names it after the SDK (Stripe's `appInfo`). */
export interface AppInfo {
  /** e.g. `MyShop`; letters, digits and `.-_` only. */
  name: string;
  /** e.g. `2.1.0`. */
  version?: string | undefined;
  /** Where to learn more about it, or reach its operators. */
  url?: string | undefined;
}

/** Headers the SDK sets itself: a default header must not replace them. */
const OWNED = new Set(['authorization', 'content-type', 'content-length', 'accept', 'host', 'user-agent']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const APP_NAME = /^[\w.-]+$/;

/** Refuses default headers that are not valid HTTP, or that would replace one the SDK owns. */
export function checkDefaultHeaders(headers: Record<string, string> | undefined): void {
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (!TOKEN.test(name))
      throw new OAConfigError(`defaultHeaders: ${JSON.stringify(name)} is not a header name`);
    if (OWNED.has(name.toLowerCase())) {
      const hint = name.toLowerCase() === 'user-agent' ? ' (use appInfo to name your application)' : '';
      throw new OAConfigError(`defaultHeaders: ${name} is set by the SDK${hint}`);
    }
    if (typeof value !== 'string' || /[\r\n\0]/.test(value)) {
      throw new OAConfigError(`defaultHeaders: the value of ${name} must be a string on one line`);
    }
  }
}

/** `oa-messaging/1.2.3 node/v20.19.0`, then the application when there is one. */
export function userAgent(app: AppInfo | undefined): string {
  const sdk = `oa-messaging/${VERSION} node/${process.version}`;
  if (!app) return sdk;
  if (typeof app.name !== 'string' || !APP_NAME.test(app.name)) {
    throw new OAConfigError('appInfo.name must be letters, digits, ".", "-" or "_"');
  }
  const version = app.version ? `/${app.version.replace(/[^\w.+-]/g, '')}` : '';
  const url = app.url ? ` (+${app.url.replace(/[()\r\n]/g, '')})` : '';
  return `${sdk} ${app.name}${version}${url}`;
}

/** One client's request headers. */
export class RequestHeaders {
  /** The headers of a JSON request without a token (a login or refresh). */
  readonly json: Readonly<Record<string, string>>;
  readonly #common: Readonly<Record<string, string>>;
  #bearer: { token: string; headers: Record<string, string> } | undefined;

  constructor(app: AppInfo | undefined, defaults: Record<string, string> | undefined) {
    this.#common = { ...defaults, accept: 'application/json', 'user-agent': userAgent(app) };
    this.json = { ...this.#common, 'content-type': 'application/json' };
  }

  /** The JSON headers with a bearer token, built once per token rather than spread on every call. */
  withToken(token: string): Record<string, string> {
    if (this.#bearer?.token !== token) {
      this.#bearer = { token, headers: { ...this.json, authorization: `Bearer ${token}` } };
    }
    return this.#bearer.headers;
  }

  /** An upload's headers: its own content headers (multipart boundary, length) and the token. */
  forUpload(content: Record<string, string>, token: string | undefined): Record<string, string> {
    return {
      ...this.#common,
      ...content,
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    };
  }
}
