/**
 * Upload once: the answer of an upload is reused for the same bytes. The API counts uploads in a
 * window of their own (20 a minute), and a bot that answers with the same picture, or a campaign that
 * sends the same clip, would otherwise upload it again each time. An answer is found by the SHA-256 of
 * the file's bytes, under the endpoint's URL and the api key: never across accounts.
 */
import type * as z from 'zod/mini';
import { sha256 } from '#uploads-runtime';
import type { UploadProgress } from '../schemas/requests.js';
import { toBytes } from './chunks.js';
import type { PreparedUpload } from './types.js';

/**
 * What the reuse needs of the call it serves (the pipeline's call control, handed in): each of its
 * waits ends with the call's deadline, signal and `close()`.
 */
export interface ReuseControl {
  /** Why the call was stopped; `undefined` while it runs. */
  readonly stopped: unknown;
  wait<T>(promise: Promise<T>, doing: string): Promise<T>;
  /** The error of a call stopped while `doing`. */
  error(doing: string): Error;
}

/** What the reuse needs of an upload endpoint: its path, and the schema its kept answers are checked with. */
interface UploadEndpoint<R extends z.ZodMiniType> {
  readonly path: string;
  readonly response: R;
}

/**
 * Where the answers of uploads are kept for reuse (the client's memory by default;
 * `Coordination.uploadAnswers` to share them between processes, as `oa-messaging/redis` does). A store
 * may let an answer go before its time: that only costs one more upload.
 */
export interface UploadAnswers {
  /** The answer kept under `key`, or `undefined`. What it gives back is checked before it is used. */
  get(key: string): Promise<unknown>;
  /** Keeps `answer` (an upload's `data`, a plain JSON object) under `key` for `ttlMs`. */
  set(key: string, answer: object, ttlMs: number): Promise<void>;
}

/**
 * How long an upload's answer is reused: the API states no lifetime for stored media, so a day, well
 * inside what a stored file can be expected to live.
 */
export const UPLOAD_ANSWER_TTL_MS = 86_400_000;
/** At most this many answers in a client's memory; the least recently used go first. */
const MAX_ANSWERS = 500;

/** The default {@link UploadAnswers}: one client's memory, bounded in size and in time. */
class MemoryUploadAnswers implements UploadAnswers {
  /** key -> the answer and when it stops counting; insertion order is use order. */
  readonly #answers = new Map<string, { answer: object; expiresAt: number }>();

  async get(key: string): Promise<unknown> {
    const entry = this.#answers.get(key);
    if (entry === undefined) return undefined;
    this.#answers.delete(key);
    if (entry.expiresAt <= Date.now()) return undefined;
    // Back at the young end: the least recently used answer goes first.
    this.#answers.set(key, entry);
    return entry.answer;
  }

  async set(key: string, answer: object, ttlMs: number): Promise<void> {
    this.#answers.delete(key);
    this.#answers.set(key, { answer, expiresAt: Date.now() + ttlMs });
    if (this.#answers.size > MAX_ANSWERS) {
      const oldest = this.#answers.keys().next().value;
      if (oldest !== undefined) this.#answers.delete(oldest);
    }
  }
}

/** What the reuse needs of its client. */
export interface UploadReuseContext {
  /** The key of what is kept for the OA the client speaks to (`<apiKey>@<baseUrl>`). */
  readonly stateKey: string;
  readonly baseUrl: URL;
  readonly logger: {
    debug?: ((message: string) => void) | undefined;
    warn?: ((message: string, details: Record<string, unknown>) => void) | undefined;
  };
}

/** One upload under way, for the calls of the same bytes that come while it runs. */
interface Running {
  promise: Promise<object>;
  /** The control of the call that runs it: when that call is stopped, the others upload themselves. */
  control: ReuseControl;
}

const HASHING = 'reading the file to recognise an earlier upload of it';
const WAITING = 'waiting for an upload of the same bytes';

/** A client's reuse of upload answers: its memory, the coordination's store, the uploads under way. */
export class UploadReuse {
  readonly #ctx: UploadReuseContext;
  readonly #ttlMs: number;
  readonly #local = new MemoryUploadAnswers();
  readonly #shared: UploadAnswers | undefined;
  readonly #running = new Map<string, Running>();

  constructor(ctx: UploadReuseContext, ttlMs: number, shared: UploadAnswers | undefined) {
    this.#ctx = ctx;
    this.#ttlMs = ttlMs;
    this.#shared = shared;
  }

  /**
   * The answer for `upload`'s bytes: a kept one, the one of an upload of them under way, or `send()`'s
   * (then kept). Only a replayable file comes here: its bytes are read once more to hash them, inside
   * the call's `control`. A failed upload keeps nothing.
   */
  async upload<R extends z.ZodMiniType>(
    endpoint: UploadEndpoint<R>,
    upload: PreparedUpload,
    control: ReuseControl,
    onProgress: ((progress: UploadProgress) => void) | undefined,
    send: () => Promise<z.output<R>>,
  ): Promise<z.output<R>> {
    const { digest, size } = await hashOf(upload, control);
    const key = `${this.#ctx.stateKey}:${new URL(endpoint.path, this.#ctx.baseUrl).href}:${digest}`;
    for (let running = this.#running.get(key); running; running = this.#running.get(key)) {
      try {
        return copyOf(await control.wait(running.promise, WAITING)) as z.output<R>;
      } catch (error) {
        // Its caller stopped it (a signal, a deadline): this call, still going, uploads by itself.
        if (control.stopped || !running.control.stopped) throw error;
      }
    }
    const promise = this.#lookUpOrSend(key, endpoint, control, onProgress, size, send).finally(() =>
      this.#running.delete(key),
    );
    this.#running.set(key, { promise, control });
    return copyOf(await promise) as z.output<R>;
  }

  async #lookUpOrSend<R extends z.ZodMiniType>(
    key: string,
    endpoint: UploadEndpoint<R>,
    control: ReuseControl,
    onProgress: ((progress: UploadProgress) => void) | undefined,
    size: number,
    send: () => Promise<z.output<R>>,
  ): Promise<object> {
    const kept = await this.#find(key, endpoint, control);
    if (kept !== undefined) {
      this.#ctx.logger.debug?.(
        `oa-messaging: POST ${endpoint.path} not sent: the same ${size} bytes were uploaded before; that answer is reused`,
      );
      onProgress?.({ loaded: size, total: size });
      return kept;
    }
    const stateKey = this.#ctx.stateKey;
    const answer = (await send()) as object;
    // Kept for the OA that answered: a login inside the call may have moved the client to another OA
    // (its credentials read again name it), whose answer is not the first one's.
    if (this.#ctx.stateKey === stateKey) await this.#keep(key, endpoint, answer);
    return answer;
  }

  /** A kept answer, in this client's memory, else in the shared store (then remembered here too). */
  async #find(
    key: string,
    endpoint: UploadEndpoint<z.ZodMiniType>,
    control: ReuseControl,
  ): Promise<object | undefined> {
    const local = await this.#local.get(key);
    if (local !== undefined) return local as object;
    if (this.#shared === undefined) return undefined;
    let found: unknown;
    try {
      found = await control.wait(this.#shared.get(key), 'looking for an earlier upload of the file');
    } catch (error) {
      if (control.stopped) throw error;
      // The store only saves uploads: one that cannot be reached costs an upload, never a failure.
      this.#warn(`could not look up an earlier upload for POST ${endpoint.path}; uploading`, error);
      return undefined;
    }
    if (found === undefined || found === null) return undefined;
    // Be tolerant in what comes back: anything but a valid answer (another program's value, an older
    // layout) is no answer, and the file is uploaded.
    const valid = endpoint.response.safeParse(found);
    if (!valid.success || typeof valid.data !== 'object' || valid.data === null) return undefined;
    await this.#local.set(key, valid.data, this.#ttlMs);
    return valid.data;
  }

  /** Keeps a new answer here and in the shared store; the upload succeeded whatever the store does. */
  async #keep(key: string, endpoint: UploadEndpoint<z.ZodMiniType>, answer: object) {
    await this.#local.set(key, answer, this.#ttlMs);
    try {
      await this.#shared?.set(key, answer, this.#ttlMs);
    } catch (error) {
      this.#warn(`could not share the answer of POST ${endpoint.path} for reuse`, error);
    }
  }

  #warn(message: string, error: unknown) {
    this.#ctx.logger.warn?.(`oa-messaging: ${message}`, {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The SHA-256 of a replayable file's bytes, read as an upload reads them (a path streamed from disk,
 * never whole on Node), each read bounded by the call's deadline, signal and `close()`.
 */
async function hashOf(
  upload: PreparedUpload,
  control: ReuseControl,
): Promise<{ digest: string; size: number }> {
  const hash = sha256();
  const source = upload.content().open();
  let size = 0;
  try {
    for (;;) {
      if (control.stopped) throw control.error(HASHING);
      const next = source.next();
      const { done, value } = next instanceof Promise ? await control.wait(next, HASHING) : next;
      if (done) break;
      const bytes = toBytes(value);
      size += bytes.byteLength;
      // A file that grew since it was checked: not read on without end, and not sent either.
      if (upload.size !== undefined && size > upload.size) throw upload.sizeChanged(size);
      hash.update(bytes);
    }
  } finally {
    source.close();
  }
  if (upload.size !== undefined && size !== upload.size) throw upload.sizeChanged(size);
  return { digest: await hash.digest(), size };
}

/** An answer of its own for each caller: one that changes it does not change the others'. */
function copyOf(answer: object): object {
  return { ...answer };
}
