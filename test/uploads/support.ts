import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { OAValidationError } from '../../src/errors.js';
import { streamingMultipart } from '../../src/uploads/node-multipart.js';
import type { PreparedUpload, UploadProgress } from '../../src/uploads/types.js';
import { rejection } from '../helpers/client-fixture.js';
import { parseMultipart, type ReceivedPart, readForm } from '../helpers/multipart.js';

export const MEDIA = fileURLToPath(new URL('../fixtures/media/', import.meta.url));
export const MB = 1024 * 1024;

/** A fixture's path and bytes. */
export const media = (name: string) => ({ path: join(MEDIA, name), bytes: readFileSync(join(MEDIA, name)) });

/** A temp directory removed by `cleanup()`. */
export function tempDir() {
  const dir = mkdtempSync(join(tmpdir(), 'oa-uploads-'));
  return {
    dir,
    file: (name: string) => join(dir, name),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A sparse file of `size` bytes that starts with `head`: sniffs as `head`'s format, costs no disk or memory. */
export async function sparseFile(path: string, head: Uint8Array, size: number): Promise<string> {
  const handle = await open(path, 'w');
  try {
    await handle.write(head, 0, head.length, 0);
    await handle.truncate(size);
  } finally {
    await handle.close();
  }
  return path;
}

/** A stream of unknown length: `head`, then `total - head.length` zero bytes in 1 MB slices of one buffer. */
export function zeroStream(head: Uint8Array, total: number): Readable {
  const zeros = Buffer.alloc(MB);
  return Readable.from(
    (function* () {
      yield Buffer.from(head);
      for (let left = total - head.length; left > 0; left -= MB) yield zeros.subarray(0, Math.min(MB, left));
    })(),
    { objectMode: false },
  );
}

/** One attempt's body, read and parsed: the file part, the headers, the raw length and the progress. */
export async function sendBody(upload: PreparedUpload) {
  const progress: UploadProgress[] = [];
  const { body, headers } = await streamingMultipart(upload, (p) => progress.push(p));
  const raw = await readForm(body);
  const parts = await parseMultipart(headers, Readable.from([raw]));
  expect(parts).toHaveLength(1);
  return { part: parts[0] as ReceivedPart, headers, length: raw.length, progress };
}

/** The OAValidationError a promise rejects with. */
export async function refusal(promise: Promise<unknown>): Promise<OAValidationError> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(OAValidationError);
  return error as OAValidationError;
}
