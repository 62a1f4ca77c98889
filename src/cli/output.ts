/**
 * Where `oa` writes. Results go to stdout: readable lines, or with `--json` one JSON document (one JSON
 * line per event for the commands that stream). Notices, progress and errors go to stderr, so a
 * script's stdout holds nothing but the result. Every write but the token of `oa token` passes through
 * the redaction of the secrets the command knows, as a second line of defence behind the SDK's own.
 */
import { isOAError, type OAValidationIssue } from '../index.js';
import { AfterUploadError, HintedError, UsageError } from './errors.js';
import { issueLines } from './flags.js';
import { keyValueLines } from './format.js';

/** The streams `oa` writes to; a TTY stderr shows progress bars. */
export interface OutputStreams {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
}

/** What a failure shows: the error's own fields, never its body or cause. */
interface ErrorReport {
  name: string;
  message: string;
  status?: number;
  code?: string;
  info?: string;
  deliveryUnknown?: boolean;
  issues?: OAValidationIssue[];
  /** A `--file` send that failed after the upload: the upload's answer. */
  upload?: unknown;
  /** What to do about it, in flags. */
  hint?: string;
}

const REDACTED = '[redacted]';

/** The output of one command run. */
export class Output {
  /** `--json`: results and errors as JSON. */
  readonly json: boolean;
  readonly #streams: OutputStreams;
  readonly #secrets = new Set<string>();

  constructor(json: boolean, streams: OutputStreams = process) {
    this.json = json;
    this.#streams = streams;
  }

  /** The stream progress is drawn on. */
  get progressStream(): NodeJS.WriteStream | NodeJS.WritableStream {
    return this.#streams.stderr;
  }

  /** Never prints `value`, wherever it would appear (the api secret; a token the command learned). */
  addSecret(value: string | undefined): void {
    // A value of a few characters would redact ordinary text everywhere, and guards nothing.
    if (value && value.length >= 4) this.#secrets.add(value);
  }

  #redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) out = out.split(secret).join(REDACTED);
    return out;
  }

  /** The command's result: `value` as JSON with `--json`, else the readable `lines`. */
  result(value: unknown, lines: string | string[]): void {
    const text = this.json ? JSON.stringify(value, null, 2) : [lines].flat().join('\n');
    this.#streams.stdout.write(`${this.#redact(text)}\n`);
  }

  /**
   * One event of a command that streams (a webhook event): one JSON line with `--json`, else `lines`.
   */
  event(value: unknown, lines: string | string[]): void {
    const text = this.json ? JSON.stringify(value) : [lines].flat().join('\n');
    this.#streams.stdout.write(`${this.#redact(text)}\n`);
  }

  /** The access token alone, for `oa token`: the one secret `oa` prints, and only on stdout. */
  token(value: unknown, accessToken: string): void {
    const text = this.json ? JSON.stringify(value, null, 2) : accessToken;
    this.#streams.stdout.write(`${text}\n`);
  }

  /** A status line that is not the result (listening, stopped, a wait): stderr. */
  notice(line: string): void {
    this.#streams.stderr.write(`${this.#redact(line)}\n`);
  }

  /** Reports a failure on stderr: a JSON `{ error }` with `--json`, else readable lines. */
  failure(error: unknown): void {
    const report = reportOf(error);
    const text = this.json ? JSON.stringify({ error: report }) : describe(report);
    this.#streams.stderr.write(`${this.#redact(text)}\n`);
  }
}

/** The safe fields of an error. Bodies and causes stay out: they may hold what the user did not type. */
function reportOf(error: unknown): ErrorReport {
  if (error instanceof AfterUploadError) return { ...reportOf(error.cause), upload: error.upload };
  if (error instanceof HintedError) return { ...reportOf(error.cause), hint: error.hint };
  if (error instanceof UsageError) return { name: 'UsageError', message: error.message };
  if (!isOAError(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return { name: error instanceof Error ? error.name : 'Error', message };
  }
  const fields = error as unknown as Record<string, unknown>;
  const report: ErrorReport = { name: error.name, message: error.message };
  if (typeof fields.status === 'number') report.status = fields.status;
  if (typeof fields.code === 'string') report.code = fields.code;
  if (typeof fields.info === 'string') report.info = fields.info;
  if (Array.isArray(fields.issues) && fields.issues.length > 0) {
    report.issues = fields.issues as OAValidationIssue[];
  }
  if (error.deliveryUnknown) report.deliveryUnknown = true;
  return report;
}

function describe(report: ErrorReport): string {
  // A request refused before it was sent: what to change, in the flags the user typed.
  if (report.name === 'OAValidationError' && report.issues) {
    const [first, ...more] = issueLines(report.issues);
    return [`oa: ${first} (nothing was sent)`, ...more.map((line) => `  ${line}`)].join('\n');
  }
  // A usage error or a plain one is its message; an error of the SDK's is named, for a search.
  const plain = report.name === 'UsageError' || report.name === 'Error';
  const lines = [plain ? `oa: ${report.message}` : `oa: ${report.name}: ${report.message}`];
  if (report.status !== undefined) lines.push(`  status: ${report.status}`);
  if (report.code !== undefined) lines.push(`  code:   ${report.code}`);
  if (report.info !== undefined) lines.push(`  info:   ${report.info}`);
  if (report.hint !== undefined) lines.push(`  ${report.hint}`);
  if (report.deliveryUnknown) {
    lines.push('  The message may have been delivered: check before sending it again.');
  }
  if (report.upload !== undefined) {
    lines.push('  The file was stored before the failure; to send it without uploading it again, use:');
    for (const line of keyValueLines(report.upload as Record<string, unknown>)) lines.push(`    ${line}`);
  }
  return lines.join('\n');
}
