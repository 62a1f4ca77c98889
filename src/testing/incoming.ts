/** Reading a request the same way whatever the transport: headers to one shape, the body by its type. */
import type { FakeRequest } from './types.js';
import { type ParsedForm, parseMultipart } from './uploads.js';

/** A request body, read by its Content-Type. */
export interface ParsedBody {
  json?: unknown;
  /** The body was meant as JSON (or had no type) and did not parse. */
  badJson?: boolean;
  text?: string;
  form?: ParsedForm;
  /** Multipart by its Content-Type, but unreadable. */
  badForm?: boolean;
}

/** Headers as lower-case names with string values (repeated ones joined with `, `). */
export function normalizeHeaders(headers: FakeRequest['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof (headers as Headers).forEach === 'function' && typeof (headers as Headers).get === 'function') {
    (headers as Headers).forEach((value, key) => {
      out[key.toLowerCase()] = value;
    });
    return out;
  }
  for (const [key, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
    if (value !== undefined) out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Reads a body: multipart into its parts, anything else as JSON when it parses, else as text. */
export async function parseBody(contentType: string, body: Uint8Array): Promise<ParsedBody> {
  if (/^multipart\/form-data/i.test(contentType)) {
    const form = await parseMultipart(contentType, body);
    return form ? { form } : { badForm: true };
  }
  if (body.byteLength === 0) return {};
  const text = Buffer.from(body).toString('utf8');
  try {
    return { json: JSON.parse(text) };
  } catch {
    const meantAsJson = contentType === '' || /json/i.test(contentType);
    return meantAsJson ? { text, badJson: true } : { text };
  }
}
