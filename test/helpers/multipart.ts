import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import busboy from 'busboy';

/** One file part of a multipart body, as a server sees it. */
export interface ReceivedPart {
  field: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
}

/** Parses a multipart/form-data body with busboy (as a Node server would); resolves to its file parts. */
export function parseMultipart(headers: IncomingHttpHeaders, body: Readable): Promise<ReceivedPart[]> {
  return new Promise((resolve, reject) => {
    const parts: ReceivedPart[] = [];
    const pending: Promise<void>[] = [];
    const parser = busboy({ headers, defParamCharset: 'utf8' });
    parser.on('file', (field, file, info) => {
      const hash = createHash('sha256');
      let size = 0;
      pending.push(
        new Promise<void>((done, fail) => {
          file.on('data', (chunk: Buffer) => {
            size += chunk.length;
            hash.update(chunk);
          });
          file.on('error', fail);
          file.on('end', () => {
            parts.push({
              field,
              filename: info.filename ?? '',
              contentType: info.mimeType,
              size,
              sha256: hash.digest('hex'),
            });
            done();
          });
        }),
      );
    });
    parser.on('error', reject);
    parser.on('close', () => {
      Promise.all(pending).then(() => resolve(parts), reject);
    });
    body.on('error', reject);
    body.pipe(parser);
  });
}

/** Reads a form-data body (an old-style stream, not async iterable) whole, failing with its error. */
export function readForm(form: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const sink = new PassThrough();
    sink.on('data', (chunk: Buffer) => chunks.push(chunk));
    sink.on('end', () => resolve(Buffer.concat(chunks)));
    form.on('error', reject);
    form.pipe(sink);
  });
}

export const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
