/**
 * What differs between runtimes, behind one interface: `#platform` resolves to Node's implementation
 * (`node.ts`) on Node and to the web one (`web.ts`) on Bun, Deno, Workers, edge runtimes and browsers,
 * so that the SDK's entry points import no Node built-in outside Node (package.json `imports`).
 */
import type { Readable } from 'node:stream';
import type { DispatcherLike, Transport } from '../core/transport.js';
import type { OTelApi } from '../telemetry/api.js';
import type { clientTelemetry } from '../telemetry/client.js';
import type { webhookTracing } from '../telemetry/webhook.js';
import type { Detect, Source } from '../uploads/source-base.js';
import type { Decoder } from '../webhook/encoding.js';
import type { webhookFastPath } from '../webhook/fast-path.js';

export interface Platform {
  /** The runtime and its version, as the User-Agent names it: `node/v20.19.0`, `bun/1.2.3`, `workerd`. */
  runtime(): string;
  /**
   * The transport of a client given no `fetch`: undici on Node (with the caller's `dispatcher`, else
   * its own), the global `fetch` elsewhere (where a `dispatcher` is refused: it is undici's).
   */
  defaultTransport(dispatcher: DispatcherLike | undefined, proxyFromEnv: boolean): Transport;
  /** A file at a path or `file:` URL, its size and format readable; refused where there is no file system. */
  pathSource(path: string | URL): Promise<Source>;
  /** The file and byte count of a stream that reads one (Node's `fs.ReadStream`), else `undefined`. */
  fileOfStream(stream: Readable): Promise<{ name: string; size: number } | undefined>;
  /** The format of a file's bytes: file-type on Node; off Node the SDK's own signatures (a smaller set). */
  detect: Detect;
  /**
   * `@opentelemetry/api` when it is installed and a provider is in play (`wanted`: one passed in the
   * options, else one registered globally); `undefined` otherwise, and always off Node.
   */
  otelApi(wanted?: boolean): OTelApi | undefined;
  /**
   * A client's traces and metrics, or `undefined`. Off Node, where the API cannot be loaded, there are
   * none, so the platform only checks (and refuses) the providers passed and brings no tracing code.
   */
  clientTelemetry: typeof clientTelemetry;
  /** A webhook handler's span per delivery; off Node, none (the delivery is handled as it is). */
  webhookTracing: typeof webhookTracing;
  /**
   * Decodes a webhook body with `node:zlib` (for `br`, and where `DecompressionStream` is missing),
   * within the limit; off Node there is none: every coding is `UNSUPPORTED`.
   */
  decodeWithZlib: Decoder;
  /**
   * The webhook reader's fast path (compiled readers, the hand-written reader of a well-formed event),
   * which gives exactly what the schemas give, sooner: on Node, Bun and Deno; on workerd `undefined`,
   * where a Worker reads one event per request and every field is judged by its schema.
   */
  webhookFastPath: typeof webhookFastPath | undefined;
  /**
   * Whether no id in a `user_ids` list is repeated: hashed in typed tables on Node, Bun and Deno (about
   * twice as fast as a Set on a long list); a Set on workerd, where the bundle's size counts for more.
   */
  allDistinct(ids: readonly string[]): boolean;
  /**
   * A SHA-256 of bytes given in parts, for the reuse of upload answers: `node:crypto` on Node, fed as
   * the parts come; off Node the Web Crypto digest, which takes the bytes whole, so the parts are kept
   * until `digest()`.
   */
  sha256(): Sha256;
}

/** A SHA-256 in progress: parts in, then the hex digest once. */
export interface Sha256 {
  update(bytes: Uint8Array): void;
  /** The digest of every part, as 64 lowercase hex digits. */
  digest(): Promise<string>;
}
