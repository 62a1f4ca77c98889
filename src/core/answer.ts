/** Maps an answer to the endpoint's typed `data`, or to the error it stands for, scrubbed of secrets. */
import type { z } from 'zod';
import { errorFromAnswer, OAResponseValidationError } from '../errors.js';
import type { Endpoint } from './endpoint.js';
import { redactJson, redactText } from './redact.js';
import type { TransportResponse } from './transport.js';
import { formatIssues, toIssues } from './validate.js';

/**
 * The answer's `data`, parsed by the endpoint's schema, or the error it stands for. Everything that
 * leaves in an error is scrubbed (`secrets`, credential fields, JWTs); a successful answer reaches
 * the caller and the token store intact (it may rightly hold a token the client already has).
 */
export function readAnswer<R extends z.ZodType>(
  endpoint: Endpoint<z.ZodType, R>,
  res: TransportResponse,
  secrets: Iterable<string | undefined>,
): z.output<R> {
  const scrub = (text: string) => redactText(text, secrets);
  if (res.status < 200 || res.status >= 300) {
    throw errorFromAnswer({
      status: res.status,
      headers: res.headers,
      text: scrub(res.text),
      path: endpoint.path,
      isSend: endpoint.isSend,
    });
  }
  let body: unknown;
  try {
    body = JSON.parse(res.text);
  } catch (error) {
    // JSON.parse's message quotes the body: keep it as the cause, scrubbed like the body.
    const cut = res.truncated ? ` (cut at ${res.text.length} bytes)` : '';
    throw new OAResponseValidationError(
      `POST ${endpoint.path} answered ${res.status} with a body that is not JSON${cut}`,
      // Scrubbed whole, then cut: a cut first could leave the start of a secret that no longer matches.
      { status: res.status, path: endpoint.path, body: scrub(res.text).slice(0, 1000), issues: [] },
      { cause: new SyntaxError(scrub((error as Error).message)) },
    );
  }
  const data = (body as { data?: unknown } | null)?.data;
  const result = endpoint.response.safeParse(data);
  if (result.success) return result.data;
  const issues = toIssues(result.error).map((issue) => ({ ...issue, path: ['data', ...issue.path] }));
  throw new OAResponseValidationError(
    `POST ${endpoint.path} answered ${res.status} with an unexpected body: ${formatIssues(issues)}`,
    { status: res.status, path: endpoint.path, body: scrubbedJson(res.text, scrub), issues },
  );
}

/** The parsed body with secrets scrubbed from its text and credential fields blanked. */
function scrubbedJson(text: string, scrub: (text: string) => string): unknown {
  const clean = scrub(text);
  try {
    return redactJson(JSON.parse(clean));
  } catch {
    return clean;
  }
}
