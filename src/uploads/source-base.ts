/**
 * What every file source resolves to ({@link Source}), and the refusal of an input the SDK cannot read.
 * Shared by the runtime-neutral sources (`source.ts`) and each runtime's file reading: no Node
 * built-in here.
 */

import { type ChunkSource, readerSource } from './chunks.js';
import type { DetectedType } from './formats.js';

/** Finds the format of bytes or a Blob: file-type on Node, the SDK's own signatures elsewhere. */
export type Detect = (sample: Uint8Array | Blob) => Promise<DetectedType | undefined>;

/** A problem with the input itself, worded for the caller; `prepareUpload` turns it into an OAValidationError. */
export class FileInputProblem extends Error {
  constructor(
    message: string,
    readonly path: (string | number)[] = ['file'],
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** A file input, resolved: where its bytes are, what it is called, and how to read it. */
export interface Source {
  /** Names the file in messages: its name, or "the Buffer", "the stream" ... */
  label: string;
  /** The file's own name (base name of a path, a File's name), if it has one. */
  name: string | undefined;
  /** The declared type (a Blob's `type`), a hint only. */
  declaredType: string | undefined;
  /** Bytes, when known before reading. */
  size: number | undefined;
  replayable: boolean;
  /** The bytes' signature, by file-type. */
  detect(): Promise<DetectedType | undefined>;
  /** The first bytes, to say why detection failed (text?). */
  head(): Promise<Uint8Array>;
  open: ChunkSource;
  /**
   * The bytes as a Blob, for a `FormData` part, without reading them into memory where the runtime
   * allows; `undefined` for a one-shot stream (read with the limit instead).
   */
  blob: (() => Promise<Blob>) | undefined;
  /** Releases what was taken from the caller when the file is refused (destroys a stream). */
  discard(): void;
}

/**
 * The `file:` URL a path input is, or `undefined` for a plain path. Another scheme, or a URL that does
 * not parse, is refused before anything is read.
 */
export function fileUrlOf(data: string | URL): URL | undefined {
  if (!(data instanceof URL) && !/^file:/i.test(data)) return undefined;
  let url: URL;
  try {
    url = data instanceof URL ? data : new URL(data);
  } catch (error) {
    throw new FileInputProblem(`${String(data)} is not a valid file: URL`, ['file'], { cause: error });
  }
  if (url.protocol !== 'file:') {
    throw new FileInputProblem(
      `only file: URLs can be uploaded; got a ${url.protocol} URL (download it first)`,
    );
  }
  return url;
}

/** How many first bytes are kept to say why a file was not recognised. */
export const HEAD_BYTES = 512;

/** The base name of a path (`/`-separated, trailing slashes ignored), as `path.basename` gives it on POSIX. */
export function baseName(path: string): string {
  return path.replace(/\/+$/, '').split('/').pop() ?? '';
}

/** A Blob or File (Bun's `Bun.file()` too). */
export function blobSource(blob: Blob, detect: Detect): Source {
  const name =
    typeof (blob as File).name === 'string' && (blob as File).name !== '' ? (blob as File).name : undefined;
  return {
    label: name ?? ((blob as File).name === undefined ? 'the Blob' : 'the File'),
    name,
    declaredType: blob.type || undefined,
    size: blob.size,
    replayable: true,
    detect: () => detect(blob),
    head: async () => new Uint8Array(await blob.slice(0, HEAD_BYTES).arrayBuffer()),
    open: () => readerSource(blob.stream().getReader()),
    blob: async () => blob,
    discard: () => {},
  };
}
