import { OAError, OAValidationError } from '../errors.js';
import {
  acceptedFormat,
  describeDetected,
  describeOverLimit,
  type FormatHints,
  MB,
  refusalHint,
  UPLOAD_RULES,
  type UploadRules,
} from './formats.js';
import { FileInputProblem, resolveSource, type Source, unwrapInput } from './source.js';
import { baseName } from './source-base.js';
import type { FileInput, PreparedUpload, UploadKind } from './types.js';

/** The options of an upload method that `prepareUpload` reads; the others are ignored. */
export interface PrepareUploadOptions {
  /** The multipart file name; by default the file's own name, else `<kind>.<ext>`. */
  filename?: string | undefined;
  /** A hint for a format the bytes leave ambiguous; the part's type always follows the bytes. */
  contentType?: string | undefined;
  /**
   * The call's stop signal (its deadline, the caller's signal, `close()`): it ends the reading of a
   * stream's first bytes, and the stream is destroyed or cancelled.
   */
  signal?: AbortSignal | undefined;
}

/** `true` when the first bytes read as text: no NUL byte and valid UTF-8. */
function looksLikeText(head: Uint8Array): boolean {
  if (head.length === 0 || head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: true });
    return true;
  } catch {
    return false;
  }
}

function validationError(
  rules: UploadRules,
  message: string,
  path: (string | number)[] = ['file'],
  cause?: unknown,
) {
  return new OAValidationError(
    `${rules.method}: ${message}`,
    [{ path, message }],
    cause === undefined ? {} : { cause },
  );
}

function checkOptions(rules: UploadRules, opts: PrepareUploadOptions): void {
  if (opts.filename !== undefined && typeof opts.filename !== 'string') {
    throw validationError(rules, 'filename must be a string', ['filename']);
  }
  if (opts.contentType !== undefined && typeof opts.contentType !== 'string') {
    throw validationError(rules, 'contentType must be a string', ['contentType']);
  }
}

/** The name to send: the base name of the one given, which must not be blank (`'/'`, `'dir/ '`). */
function fileNameOf(rules: UploadRules, given: string, path: string[]): string {
  const name = baseName(given);
  if (name.trim() === '') throw validationError(rules, 'filename must be a non-empty file name', path);
  return name;
}

/** Checks format and size, refusing with a message that says what was found and what is allowed. */
async function check(
  kind: UploadKind,
  rules: UploadRules,
  source: Source,
  label: string,
  hints: FormatHints,
) {
  if (source.size === 0) throw validationError(rules, `${label} is empty (0 bytes)`);
  const detected = await source.detect();
  if (detected === undefined) {
    const text = looksLikeText(await source.head()) ? ' (it looks like text)' : '';
    throw validationError(
      rules,
      `${label} is not a recognised ${rules.noun}: its bytes match no known format${text}; ` +
        `allowed: ${rules.allowed.join(', ')}`,
    );
  }
  const format = acceptedFormat(kind, detected, hints);
  if (format === undefined) {
    throw validationError(
      rules,
      `${label} is ${describeDetected(detected)}; allowed: ${rules.allowed.join(', ')}${refusalHint(kind, detected)}`,
    );
  }
  if (source.size !== undefined && source.size > rules.maxBytes) {
    throw validationError(rules, `${label} ${describeOverLimit(source.size, rules.maxBytes)}`);
  }
  return format;
}

/**
 * Checks a file for one of the upload endpoints (spec endpoints 9-11) and makes it ready to send.
 *
 * - The format comes from the bytes' signature (file-type); the name's extension and a declared type
 *   only settle what the bytes leave open (an MP4 container uploaded as audio is M4A when named
 *   `.m4a` or declared `audio/*`). Limits: images 5 MB, video and audio 100 MB, with 1 MB = 1,048,576
 *   bytes. Every refusal is an {@link OAValidationError} naming the method, the file, what was found
 *   and what is allowed, with issue path `['file']`; nothing has been sent.
 * - A path or stream is never read whole: only its first bytes, to detect the format. A stream of
 *   unknown length is checked against the limit as it goes out (its body fails with an
 *   `OAValidationError` once it passes the limit).
 * - A stream handed over is destroyed when the file is refused, or when `opts.signal` fires while its
 *   first bytes are read.
 *
 * @param kind `image`, `video` or `audio`.
 * @param file A path, a `file:` URL, bytes (`Uint8Array`, `ArrayBuffer`), a Blob or File, a web
 *   `ReadableStream` or a Node Readable, or `{ data, filename?, contentType? }`.
 */
export async function prepareUpload(
  kind: UploadKind,
  file: FileInput,
  opts: PrepareUploadOptions = {},
): Promise<PreparedUpload> {
  const rules = UPLOAD_RULES[kind];
  if (rules === undefined) throw new OAError(`prepareUpload: unknown upload kind ${String(kind)}`);
  checkOptions(rules, opts);
  let source: Source | undefined;
  try {
    const input = unwrapInput(file);
    source = await resolveSource(input.data, opts.signal);
    const givenName =
      opts.filename !== undefined
        ? fileNameOf(rules, opts.filename, ['filename'])
        : input.filename !== undefined
          ? fileNameOf(rules, input.filename, ['file', 'filename'])
          : undefined;
    const hints: FormatHints = {
      filename: givenName ?? source.name,
      contentType: opts.contentType ?? input.contentType ?? source.declaredType,
    };
    const format = await check(kind, rules, source, givenName ?? source.label, hints);
    const filename = givenName ?? source.name ?? `${kind}.${format.ext}`;
    return prepared(kind, rules, source, filename, format.contentType);
  } catch (error) {
    source?.discard();
    if (error instanceof FileInputProblem) {
      throw validationError(rules, error.message, error.path, error.cause);
    }
    throw error;
  }
}

function prepared(
  kind: UploadKind,
  rules: UploadRules,
  source: Source,
  filename: string,
  contentType: string,
): PreparedUpload {
  const { size, replayable } = source;
  let sent = false;
  const tooLarge = () =>
    validationError(
      rules,
      `${filename} is larger than ${rules.maxBytes / MB} MB, the limit: the stream gave more than ` +
        `${rules.maxBytes.toLocaleString('en-US')} bytes, so the upload was stopped`,
    );
  const sizeChanged = (loaded: number) =>
    new OAError(
      `${rules.method}: ${filename} changed while it was being sent: it had ${size} bytes when checked, ` +
        `${loaded > (size ?? 0) ? 'more' : loaded} when read`,
    );

  const content = () => {
    if (!replayable && sent) {
      throw new OAError(
        `${rules.method}: ${filename} came from a stream, which an earlier attempt already read; a stream ` +
          'cannot be sent again (pass a path, Buffer or Blob to allow retries)',
      );
    }
    sent = true;
    return {
      open: source.open,
      blob: source.blob,
      // A one-shot stream cannot serve another attempt: released even if this one never read it.
      release: () => {
        if (!replayable) source.discard();
      },
    };
  };

  return {
    kind,
    field: rules.field,
    filename,
    contentType,
    size,
    maxBytes: rules.maxBytes,
    replayable,
    content,
    tooLarge,
    sizeChanged,
    discard: () => source.discard(),
  };
}
