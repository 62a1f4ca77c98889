/**
 * The logic both webhook handlers share: method, size, verification, parsing, deduplication and the call
 * to `onEvent`, turned into a status and a small JSON body. The handlers only read the body with a limit
 * and write the answer in their runtime's terms.
 */

import * as z from 'zod/mini';
import { isThenable, sleep } from '../core/call-control.js';
import { containLogger, type Logger } from '../core/logger.js';
import { isOAError, OAConfigError } from '../errors.js';
import {
  aFunction,
  aLogger,
  checkConfig,
  checked,
  isObject,
  judged,
  optionsOf,
  positiveInteger,
  required,
} from '../schemas/option-checks.js';
import { webhookTracing } from '../telemetry/runtime.js';
import type { DeliveryNote } from '../telemetry/webhook.js';
import { dedupeKeyOf, type WebhookDedupeOptions } from './dedupe.js';
import { createDeliverOnce, DEDUPE_OPTIONS } from './deliver-once.js';
import { type ContentCoding, type Decoder, TOO_LARGE, UNREADABLE, UNSUPPORTED } from './encoding.js';
import { parseWebhookEvent } from './parse.js';
import { isMessageEvent, type WebhookEvent } from './schemas.js';

/**
 * Keeps work going after the answer was sent, as serverless platforms allow: a Worker's
 * `ctx.waitUntil`, Vercel's `waitUntil` (`@vercel/functions`), Next.js's `after`. The platform waits
 * for `promise` (up to its own limit) before it ends the request's instance.
 */
export type WaitUntil = (promise: Promise<unknown>) => void;

/** What `onEvent` (and `store`) get besides the event. */
export interface WebhookEventContext<Req> {
  /** The request as the runtime gave it (`IncomingMessage` or `Request`): headers, address... */
  request: Req;
  /**
   * Hands slow work to the platform without holding the answer: `context.waitUntil(sendReply())`.
   * Present only when the handler has a `waitUntil` (the option, or the platform's context given to
   * the fetch handler with the request). A rejection of the promise is logged (`error`, with the
   * event's `msgKey`), never passed on to the platform.
   */
  waitUntil?: WaitUntil | undefined;
  /**
   * With the handler's `accounts`: the account whose webhook path the request came to, which is the
   * event's own (`accounts.forEvent(event)` is its client).
   */
  account?: string | undefined;
}

/**
 * What a webhook handler needs of many accounts: the `OAAccounts` of `createAccounts({ webhookSecret })`
 * is one (`oa-messaging`).
 */
export interface WebhookAccounts {
  /** The account whose webhook path `path` ends with, `undefined` for none. */
  webhookAccount(path: string): Promise<string | undefined>;
  /** The account id of an event. */
  accountOf(event: WebhookEvent): string | undefined;
  /**
   * `false` when there are no webhook paths (`createAccounts` without `webhookSecret`): the handler
   * is then refused when made. An object of your own without it is taken as having paths.
   * @default undefined (taken as true)
   */
  readonly hasWebhookPaths?: boolean | undefined;
}

/**
 * Options of {@link createWebhookHandler} and {@link createFetchWebhookHandler}. `Req` is the runtime's
 * request type: `IncomingMessage` for node:http/Express/Connect, `Request` for fetch runtimes.
 */
export interface WebhookHandlerOptions<Req> {
  /**
   * Called once per event: every JSON object that passes `verify` is one, typed as far as its fields
   * allow (see `parseWebhookEvent`; narrow with `isMessageEvent`, log `event.issues`). Resolve when
   * done: the answer (200) waits for it, and a throw or rejection answers 500 so the sender delivers
   * again. Keep it quick; queue slow work, or hand it to `context.waitUntil` where there is one. With
   * `store`, it runs once the event is stored, after the answer when there is a `waitUntil`.
   */
  onEvent: (event: WebhookEvent, context: WebhookEventContext<Req>) => void | Promise<void>;
  /**
   * Keeps the event where it is safe before the answer, e.g. a queue's `send` or a KV `put`: with it,
   * `store` decides the answer and `onEvent` runs after it. Resolved: the event is safe, the answer is
   * 200, then `onEvent` runs, and its failure is logged (`error`, with the event's `msgKey`) but
   * changes no answer (the event is in your store, to process again). A throw or rejection answers 500,
   * without `onEvent`, so the sender delivers again. With a `waitUntil` (this option, or per request on
   * the fetch handler) the 200 goes out as soon as `store` resolved and `onEvent` runs inside
   * `waitUntil`; without one, the answer also waits for `onEvent`. With `dedupe`, a delivery of an
   * event already stored answers 200 duplicate, stored and processed once.
   * @default undefined (the answer waits for `onEvent`, whose failure answers 500)
   */
  store?: ((event: WebhookEvent, context: WebhookEventContext<Req>) => void | Promise<void>) | undefined;
  /**
   * The platform's way to keep work going after the answer, for every request of this handler (e.g.
   * `waitUntil` from `@vercel/functions`). The fetch handler also takes it per request, as its second
   * argument (`handler(request, ctx)` in a Worker), which wins over this option. It answers first
   * with `store` (see there), and reaches `onEvent` as `context.waitUntil`. A method taken off its
   * object keeps its `this` only when bound: `ctx.waitUntil.bind(ctx)`.
   *
   * `true` is for long-running servers (Node, Bun, Deno): the handler keeps the work itself, and
   * `handler.close()` waits for it (bounded) before the process exits. Whatever the `waitUntil`, the
   * work handed to it is what `close()` drains.
   * @default undefined (none: the answer waits for `onEvent`, or for `store` then `onEvent`)
   */
  waitUntil?: WaitUntil | true | undefined;
  /**
   * Largest body accepted, in bytes; checked against `Content-Length` before reading and again while
   * reading, and for a compressed body (`Content-Encoding: gzip`, `deflate` or `br`) also while
   * decoding it, which stops there. A larger body answers 413.
   * @default 1048576 (1 MiB)
   */
  maxBodyBytes?: number | undefined;
  /**
   * Skip redeliveries of a message already handled (same `MsgKey`, else `MsgId`, else `MsgSeq`, random
   * and `MsgTime`): a duplicate answers 200 without calling `onEvent`. A duplicate that arrives while the
   * first delivery is still in `onEvent` waits for its outcome (200 when it succeeded; when it failed,
   * the duplicate runs `onEvent` itself), at most `waitTimeoutMs`, then answers 503. `true` uses the
   * defaults (in memory, this process, 10,000 keys, one hour); an object sets them, and its `store`
   * shares the keys between instances (`createRedisDedupeStore` from `oa-messaging/redis`).
   * @default false
   */
  dedupe?: boolean | WebhookDedupeOptions | undefined;
  /**
   * Decides whether a request may be processed; `false` answers 401. Runs before the body is parsed. Gets
   * the raw body (a `Buffer` on node; decoded when it was sent compressed), or `undefined` when a body
   * parser already turned it into an object.
   * The OA API does not sign its webhook requests, so check what you can: a secret in the path or query,
   * the sender's address, a header your proxy adds. A throw answers 500 (logged) so the sender tries
   * again.
   * @default undefined (every request is accepted)
   */
  verify?: ((request: Req, rawBody: Uint8Array | undefined) => boolean | Promise<boolean>) | undefined;
  /**
   * Many accounts behind one receiver (`createAccounts({ webhookSecret })` of `oa-messaging`): a
   * request is taken only when its path ends with an account's `accounts.webhookPath(id)` (the token
   * checked in constant time; else 404), and its event only when it is that account's (`accountOf`;
   * else 403, `onEvent` not run, nothing deduplicated). `context.account` names the account.
   * Accounts made without `webhookSecret` have no paths: the handler refuses them when it is made
   * (`OAConfigError`).
   * @default undefined (one account: any path)
   */
  accounts?: WebhookAccounts | undefined;
  /**
   * Where refusals (`warn`), failures of `onEvent`, `store`, work handed to `waitUntil` or the dedupe
   * store (`error`) and skipped
   * duplicates (`debug`) are reported. Event contents are never logged. A logger that throws is ignored:
   * it never costs an answer.
   * @default undefined (silent)
   */
  logger?: Logger | undefined;
}

/** Options of a webhook handler's `close()`. */
export interface WebhookCloseOptions {
  /**
   * How long `close()` waits for the deliveries being handled and the work handed to `waitUntil`
   * (`onEvent` after the answer); past it, `close()` resolves anyway and logs (`error`) what is still
   * running. A platform's grace period (Kubernetes: 30 s after SIGTERM) should be longer.
   * @default 10000
   */
  timeoutMs?: number | undefined;
}

/** What both handlers have besides being called: a way to stop taking deliveries and drain. */
export interface WebhookHandlerClose {
  /**
   * Stops taking deliveries (each one from now answers 503 with `Retry-After`, so the OA delivers it
   * again, to another instance or after the restart), then waits for the deliveries already being
   * handled and the work handed to `waitUntil` (`onEvent` after an answer-first 200), at most
   * `timeoutMs`. It rejects only for a `timeoutMs` that is not a number of milliseconds
   * (`OAConfigError`, and the handler stays open); a second call gives the first call's promise.
   * Call it on SIGTERM, before `server.close()`.
   */
  close(options?: WebhookCloseOptions): Promise<void>;
}

/** The default `timeoutMs` of a handler's `close()`, 10 s. */
export const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/**
 * The answer of the core, written by each handler in its runtime's terms. Read-only: the answers of
 * accepted deliveries are shared.
 */
export interface WebhookResult {
  status: number;
  headers: Record<string, string>;
  body: { ok: true; duplicate?: true } | { error: string };
}

/** The request body as the runtime has it: bytes still to parse, or what a body parser produced. */
export type WebhookBody = { raw: Uint8Array } | { parsed: unknown };

/** The shared handler logic, configured once per handler. */
export interface WebhookCore<Req> {
  readonly maxBodyBytes: number;
  /** 405 or 413 before the body is read, else `undefined`. */
  precheck(method: string | undefined, contentLength: string | null | undefined): WebhookResult | undefined;
  /** The answer for a body over `maxBodyBytes`. */
  tooLarge(): WebhookResult;
  /** The answer (415) for a `Content-Encoding` the handler cannot decode. */
  unsupportedEncoding(coding: string): WebhookResult;
  /**
   * The body as sent, decoded with `decoder` when `coding` says it is compressed; or the answer when it
   * cannot be: 413 past `maxBodyBytes`, 400 when the bytes are not in `coding`, 415 without a decoder.
   */
  decode(
    raw: Uint8Array,
    coding: ContentCoding | undefined,
    decoder: Decoder,
  ): Promise<Uint8Array | WebhookResult>;
  /**
   * Counts a delivery as being handled from now until `end()`, so that `close()` waits for it. Call
   * it before `precheck`, and `end()` once it is answered, whatever happened.
   */
  begin(): void;
  end(): void;
  /** The handler's `close()`: see {@link WebhookHandlerClose}. */
  close(options?: WebhookCloseOptions): Promise<void>;
  /** The answer for a request whose handling failed outside `onEvent` (logged). */
  failed(message: string, error: unknown): WebhookResult;
  /** The `logger` option, made safe: each method exists and never throws. */
  readonly log: Logger;
  /**
   * Everything after the body is read: verify, parse, dedupe, `store`, `onEvent`. `waitUntil` is the
   * request's own (the platform's context), else the option's. Never rejects.
   */
  handle(request: Req, body: WebhookBody, waitUntil?: WaitUntil): Promise<WebhookResult>;
}

/** The default `maxBodyBytes`, 1 MiB: Tencent IM caps a message at 12 KB, so any real event fits. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8' };

const answer = (status: number, body: WebhookResult['body'], extra: Record<string, string> = {}) => ({
  status,
  headers: { ...JSON_HEADERS, ...extra },
  body,
});

// The answers of every accepted delivery, made once: the handlers may keep what they derive from them.
const PROCESSED: WebhookResult = answer(200, { ok: true });
const DUPLICATE: WebhookResult = answer(200, { ok: true, duplicate: true });

/** What the logs name an event by: its `MsgKey`, else `MsgId` (as the `oa webhook` span does). */
function msgKeyOf(event: WebhookEvent): string | undefined {
  if (!isMessageEvent(event)) return undefined;
  return event.data.MsgKey || event.data.MsgId || undefined;
}

const NEEDS_ON_EVENT = 'webhook handler: onEvent must be a function';
const NEEDS_WEBHOOK_SECRET =
  "webhook handler: accounts need createAccounts({ webhookSecret }): each account's webhook path is " +
  'derived from it, and a handler given accounts takes a request only on one of those paths ' +
  '(accounts.webhookPath(id)), so without it every request would answer 404';

/** What {@link WebhookHandlerOptions} takes, checked once by either handler. */
const WebhookOptionsSchema = optionsOf(
  {
    onEvent: required((v) => typeof v === 'function', NEEDS_ON_EVENT),
    store: aFunction,
    waitUntil: checked((v) => v === true || typeof v === 'function', 'must be a function or true'),
    maxBodyBytes: positiveInteger,
    // `true` and `false` stand for no dedupe options.
    dedupe: z.optional(
      z.pipe(
        z.transform((v) => (typeof v === 'boolean' ? {} : v)),
        DEDUPE_OPTIONS,
      ),
    ),
    verify: aFunction,
    accounts: judged((v) => {
      if (!isObject(v) || typeof v.webhookAccount !== 'function' || typeof v.accountOf !== 'function') {
        return 'must be the accounts of createAccounts';
      }
      // Else every request would answer 404, with nothing to tell why.
      return v.hasWebhookPaths === false ? NEEDS_WEBHOOK_SECRET : undefined;
    }),
    logger: aLogger,
  },
  NEEDS_ON_EVENT,
);

/** Builds the core for one handler. Throws at once on options that cannot work. */
export function createWebhookCore<Req>(
  options: WebhookHandlerOptions<Req>,
  pathOf: (request: Req) => string,
): WebhookCore<Req> {
  checkConfig(WebhookOptionsSchema, options, 'webhook handler');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  // `true`: the handler keeps the work itself; handOff already tracks it for close().
  const optionWaitUntil: WaitUntil | undefined = options.waitUntil === true ? () => {} : options.waitUntil;
  const { onEvent, verify, store, accounts } = options;
  // A broken logger (one that throws or rejects) must not cost the sender its answer.
  const logger = containLogger(options.logger ?? {});
  const deliverOnce = options.dedupe
    ? createDeliverOnce(options.dedupe === true ? {} : options.dedupe, logger)
    : undefined;

  const tooLarge = () => answer(413, { error: `Body larger than ${maxBodyBytes} bytes` });

  const unsupportedEncoding = (coding: string) => {
    logger.warn?.(`oa-messaging webhook: Content-Encoding ${coding} cannot be decoded (415)`);
    // 415, not 400: the sender may try again without this encoding (RFC 7694 names the ones we read).
    return answer(
      415,
      { error: `Unsupported Content-Encoding: ${coding} (gzip, deflate or br, or none)` },
      { 'accept-encoding': 'gzip, deflate, br' },
    );
  };

  const failed = (message: string, error: unknown) => {
    logger.error?.(`oa-messaging webhook: ${message}`, { error });
    return answer(500, { error: 'Internal error' });
  };

  const traced = webhookTracing(logger);

  // What close() waits for: deliveries being handled, and the work handed to waitUntil.
  let handling = 0;
  const handedOff = new Set<Promise<unknown>>();
  let closing: Promise<void> | undefined;
  let wakeDrained: (() => void) | undefined;
  const settledOne = () => {
    if (wakeDrained !== undefined && handling === 0 && handedOff.size === 0) wakeDrained();
  };
  const closingAnswer = () => {
    logger.warn?.('oa-messaging webhook: the handler is closing (503)');
    return answer(503, { error: 'The receiver is shutting down' }, { 'retry-after': '1' });
  };

  async function drain(timeoutMs: number): Promise<void> {
    if (handling === 0 && handedOff.size === 0) return;
    const wait = sleep(timeoutMs, undefined, 'draining the webhook handler');
    wakeDrained = wait.wake;
    await wait.done;
    wakeDrained = undefined;
    if (handling > 0 || handedOff.size > 0) {
      logger.error?.(
        `oa-messaging webhook: close gave up after ${timeoutMs} ms: ${handling} delivery(ies) and ${handedOff.size} piece(s) of work handed to waitUntil still running`,
        { deliveries: handling, handedOff: handedOff.size },
      );
    }
  }

  async function handle(
    request: Req,
    body: WebhookBody,
    note: DeliveryNote | undefined,
    waitUntil: WaitUntil | undefined,
  ): Promise<WebhookResult> {
    // Never rejects: a failure here is answered (500), as one of onEvent is.
    try {
      // A body parser that ran before us may have had a higher limit than ours.
      if ('raw' in body && body.raw.byteLength > maxBodyBytes) return tooLarge();
      const account = accounts && (await accounts.webhookAccount(pathOf(request)));
      if (accounts && account === undefined) {
        logger.warn?.("oa-messaging webhook: the path is no account's webhook path (404)");
        return answer(404, { error: 'Not found' });
      }
      if (verify) {
        let allowed: boolean;
        try {
          allowed = await verify(request, 'raw' in body ? body.raw : undefined);
        } catch (error) {
          return failed('verify threw', error);
        }
        if (allowed !== true) {
          logger.warn?.('oa-messaging webhook: request refused by verify (401)');
          return answer(401, { error: 'Unauthorized' });
        }
      }

      let event: WebhookEvent;
      try {
        event = parseWebhookEvent('raw' in body ? body.raw : body.parsed);
      } catch (error) {
        if (!isOAError(error)) return failed('parsing failed unexpectedly', error);
        // Only what can never be an event gets here (not UTF-8, not JSON, not an object).
        logger.warn?.(`oa-messaging webhook: not an event (400): ${error.message}`);
        return answer(400, { error: error.message });
      }
      note?.event(event);
      if (accounts && accounts.accountOf(event) !== account) {
        logger.warn?.(`oa-messaging webhook: an event for another account on ${account}'s path (403)`);
        return answer(403, { error: "The event is not this path's account's" });
      }
      if (event.issues.length > 0) {
        // Paths and reasons only, never values: the event itself still reaches onEvent.
        logger.debug?.(`oa-messaging webhook: event accepted with ${event.issues.length} issue(s)`, {
          issues: event.issues,
        });
      }

      const msgKey = msgKeyOf(event);
      /** Hands `work` to the platform; its failure is logged, never thrown into the platform. */
      const handOff = (work: Promise<unknown>, what: string) => {
        const logged = work
          .catch((error: unknown) => {
            logger.error?.(`oa-messaging webhook: ${what} failed after the answer`, { error, msgKey });
          })
          .finally(() => {
            handedOff.delete(logged);
            settledOne();
          });
        handedOff.add(logged);
        try {
          waitUntil?.(logged);
        } catch (error) {
          // The work goes on; only the platform's promise to wait for it is lost.
          logger.error?.('oa-messaging webhook: waitUntil threw', { error, msgKey });
        }
      };
      const context: WebhookEventContext<Req> = waitUntil
        ? { request, waitUntil: (promise) => handOff(Promise.resolve(promise), 'work handed to waitUntil') }
        : { request };
      if (account !== undefined) context.account = account;
      // The step the answer depends on, and the one deduplication guards: `store` when there is one.
      // Either may answer synchronously (no promise): then so does deduplication with a memory store.
      const decisive = store ? () => store(event, context) : () => onEvent(event, context);
      const key = deliverOnce ? dedupeKeyOf(event) : undefined;
      let outcome: 'processed' | 'duplicate' | 'timeout' = 'processed';
      try {
        if (!deliverOnce || key === undefined) {
          const done = decisive();
          if (isThenable(done)) await done;
        } else {
          const delivered = deliverOnce(key, decisive);
          outcome = isThenable(delivered) ? await delivered : delivered;
        }
      } catch (error) {
        // The sender delivers again after a 5xx, and deliverOnce released the key for that delivery.
        return failed(store ? 'store threw (500)' : 'onEvent threw (500)', error);
      }
      if (outcome === 'duplicate') {
        note?.duplicate();
        return DUPLICATE;
      }
      if (outcome === 'timeout') {
        logger.warn?.('oa-messaging webhook: an earlier delivery of this message is still running (503)');
        return answer(
          503,
          { error: 'An earlier delivery of this message is still being processed' },
          {
            'retry-after': '1',
          },
        );
      }
      if (store) {
        // Stored: the event is safe, so onEvent's failure is logged rather than answered.
        const processing = (async () => onEvent(event, context))();
        if (waitUntil) handOff(processing, 'onEvent');
        else
          await processing.catch((error: unknown) => {
            logger.error?.('oa-messaging webhook: onEvent failed after the event was stored', {
              error,
              msgKey,
            });
          });
      }
      return PROCESSED;
    } catch (error) {
      return failed('unexpected failure', error);
    }
  }

  return {
    maxBodyBytes,
    begin() {
      handling++;
    },
    end() {
      handling--;
      settledOne();
    },
    close(closeOptions) {
      if (closing === undefined) {
        const timeoutMs = closeOptions?.timeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
        if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
          return Promise.reject(
            new OAConfigError('webhook handler close: timeoutMs must be a non-negative number'),
          );
        }
        closing = drain(timeoutMs);
      }
      return closing;
    },
    precheck(method, contentLength) {
      if (closing !== undefined) return closingAnswer();
      if (method?.toUpperCase() !== 'POST') {
        logger.debug?.(`oa-messaging webhook: method ${method ?? '(none)'} not allowed (405)`);
        return answer(405, { error: 'Method not allowed' }, { allow: 'POST' });
      }
      // A malformed Content-Length is left to the streaming check rather than trusted either way.
      const declared = contentLength ? Number(contentLength) : Number.NaN;
      if (Number.isFinite(declared) && declared > maxBodyBytes) {
        logger.warn?.(`oa-messaging webhook: Content-Length ${declared} over ${maxBodyBytes} (413)`);
        return tooLarge();
      }
      return undefined;
    },
    tooLarge,
    unsupportedEncoding,
    async decode(raw, coding, decoder) {
      if (coding === undefined) return raw;
      const decoded = await decoder(raw, coding, maxBodyBytes);
      if (decoded === TOO_LARGE) {
        logger.warn?.(`oa-messaging webhook: body over ${maxBodyBytes} bytes once decoded (413)`);
        return tooLarge();
      }
      if (decoded === UNSUPPORTED) return unsupportedEncoding(coding);
      if (decoded === UNREADABLE) {
        logger.warn?.(`oa-messaging webhook: not an event (400): the body is not valid ${coding}`);
        return answer(400, { error: `Invalid webhook event: the body is not valid ${coding}` });
      }
      return decoded;
    },
    failed,
    log: logger,
    handle(request, body, waitUntil) {
      return traced((note) => handle(request, body, note, waitUntil ?? optionWaitUntil));
    },
  };
}
