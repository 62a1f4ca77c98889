/**
 * The transport on runtimes other than Node, and wherever the caller gives a `fetch`: one request
 * through `fetch`, its answer read with a cap, every failure mapped to an SDK error. fetch cannot say
 * whether a request that failed had left: once it is called, a failure of a send is
 * `deliveryUnknown: true` and never retried (API.md, "Retries: never send a message twice").
 */
import { isOAError, OAConfigError, OAConnectionError, type OAError, OATimeoutError } from '../errors.js';
import { concatBytes } from '../uploads/chunks.js';
import type { PreparedUpload, UploadBody, UploadProgress } from '../uploads/types.js';
import { formDataMultipart } from '../uploads/web-multipart.js';
import type { CallControl } from './call-control.js';
import {
  errorCode,
  type FetchLike,
  MAX_BODY_BYTES,
  MAX_ERROR_BODY_BYTES,
  type Transport,
  type TransportRequest,
  type TransportResponse,
} from './transport.js';

/** What a runtime adds to the fetch transport: more init for sends, and what `close()` releases. */
export interface FetchTransportOptions {
  /** Merged into the init of each send (endpoints that deliver a message), e.g. Deno's `client`. */
  sendInit?: Record<string, unknown> | undefined;
  /** Releases what the runtime opened for the transport. */
  close?: (() => void) | undefined;
}

/** Sends with a `fetch`: the caller's, or the runtime's global one. */
export class FetchTransport implements Transport {
  readonly #fetch: FetchLike;
  readonly #options: FetchTransportOptions;

  constructor(fetch: FetchLike, options: FetchTransportOptions = {}) {
    this.#fetch = fetch;
    this.#options = options;
  }

  async send(req: TransportRequest, control: CallControl | undefined): Promise<TransportResponse> {
    if (control?.stopped) throw control.error('sending');
    const what = `POST ${req.url.pathname}`;
    const abort = new AbortController();
    /** fetch has been called: from then on the request may have reached the server. */
    let started = false;
    /** Why the SDK aborted the request (its timer, the call's deadline, close(), the signal). */
    let stopped: OAError | undefined;
    // A fetch may ignore its signal (a wrapper that rebuilds init without it, a body that never ends):
    // every wait on it is raced with this, which rejects as the attempt is stopped, so the SDK's own
    // limits bound the attempt whatever the fetch does.
    let rejectStop: (error: OAError) => void = () => {};
    const stop = new Promise<never>((_, reject) => {
      rejectStop = reject;
    });
    stop.catch(() => {});
    const stopWith = (error: OAError) => {
      if (stopped) return;
      stopped = error;
      abort.abort(error);
      rejectStop(error);
    };
    const deliveryUnknown = () => req.isSend && started;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // The attempt's own limit, unless the call's deadline comes first (it stops the call itself).
    const remaining = control?.remainingMs();
    if (remaining === undefined || req.timeoutMs < remaining) {
      timer = setTimeout(() => {
        stopWith(
          new OATimeoutError(`${what} timed out after ${req.timeoutMs} ms`, {
            deliveryUnknown: deliveryUnknown(),
            failure: started ? undefined : 'not_sent',
          }),
        );
      }, req.timeoutMs);
    }
    const offStop = control?.onStop(() => stopWith(control.errorInFlight(deliveryUnknown())));
    try {
      let response: Response;
      try {
        started = true;
        req.onStart?.();
        const answered = this.#fetch(req.url.href, {
          ...(req.isSend ? this.#options.sendInit : undefined),
          method: 'POST',
          headers: req.headers,
          body: req.body as BodyInit,
          signal: abort.signal,
        });
        // An answer that comes after the attempt was given up is not read: its body is released.
        answered.then(
          (late) => {
            if (stopped) late.body?.cancel().catch(() => {});
          },
          () => {},
        );
        response = await Promise.race([answered, stop]);
      } catch (error) {
        throw stopped ?? fetchFailure(error, req, what);
      }
      req.onSent?.();
      const keep = response.status >= 200 && response.status < 300 ? MAX_BODY_BYTES : MAX_ERROR_BODY_BYTES;
      let body: { text: string; truncated: boolean };
      try {
        body = await readCapped(response, keep, stop);
      } catch (error) {
        throw stopped ?? fetchFailure(error, req, what);
      }
      if (stopped) throw stopped;
      return { status: response.status, headers: headersOf(response.headers), ...body };
    } finally {
      clearTimeout(timer);
      offStop?.();
    }
  }

  /** A `FormData` with one Blob part (see {@link formDataMultipart}). */
  multipart(
    upload: PreparedUpload,
    onProgress: ((progress: UploadProgress) => void) | undefined,
  ): Promise<UploadBody> {
    return formDataMultipart(upload, onProgress);
  }

  /** Releases what the runtime opened for this transport; fetch keeps no other socket of the client's. */
  async close(): Promise<void> {
    this.#options.close?.();
  }
}

/** The runtime's `fetch`, for a client given none where undici is not the transport. */
export function globalFetch(): FetchLike {
  if (typeof globalThis.fetch !== 'function') {
    throw new OAConfigError('This runtime has no global fetch: pass one as new OAClient({ fetch })');
  }
  // Called through the global, as a runtime's own fetch may need (workerd refuses another `this`).
  return (input, init) => globalThis.fetch(input, init);
}

/**
 * A failure of fetch itself (a TypeError: network, DNS, reset) or of reading the answer. fetch does
 * not say whether the request had left, so it may have: a send's outcome is unknown, and it is not
 * retried; a token request or an upload is retried as an unknown outcome. The cause's code (Node's
 * fetch gives one) is named.
 */
function fetchFailure(error: unknown, req: TransportRequest, what: string): OAError {
  // The body itself refused to go on (an upload past its limit): that is the answer.
  if (isOAError(error)) return error;
  const code = errorCode(error);
  const reason = error instanceof Error ? error.message : String(error);
  const because = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return new OAConnectionError(`${what} failed: ${reason}${because}${code ? ` (${code})` : ''}`, {
    cause: error,
    deliveryUnknown: req.isSend,
  });
}

/**
 * The answer's body up to `keep` bytes; past that the stream is cancelled, not read. Each read is raced
 * with `stop` (the attempt was stopped): a body that never ends is then cancelled, not waited for.
 */
async function readCapped(
  response: Response,
  keep: number,
  stop: Promise<never>,
): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  for (;;) {
    let read: ReadableStreamReadResult<Uint8Array>;
    try {
      read = await Promise.race([reader.read(), stop]);
    } catch (error) {
      reader.cancel().catch(() => {});
      throw error;
    }
    const { done, value } = read;
    if (done) break;
    const room = keep - kept;
    if (value.byteLength <= room) {
      chunks.push(value);
      kept += value.byteLength;
      continue;
    }
    chunks.push(value.subarray(0, room));
    kept = keep;
    // The answer is known; the rest of the body is not worth the wait or the memory.
    reader.cancel().catch(() => {});
    return { text: decoder.decode(concatBytes(chunks, kept)), truncated: true };
  }
  return { text: decoder.decode(concatBytes(chunks, kept)), truncated: false };
}

const decoder = new TextDecoder();

/** The answer's headers in the record shape undici gives (names in lower case). */
function headersOf(headers: Headers): TransportResponse['headers'] {
  const record: TransportResponse['headers'] = {};
  headers.forEach((value, name) => {
    record[name] = value;
  });
  return record;
}
