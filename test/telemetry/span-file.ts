/**
 * A span exporter that appends each finished span to a file as a JSON line, so that a test can read
 * the spans of its child processes; and the reader of such files.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** A span as written: enough to rebuild and draw a trace. */
export interface SpanLine {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  startMs: number;
  endMs: number;
  status: number;
  attributes: Record<string, unknown>;
  events: { name: string; ms: number; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  process: string;
}

const ms = ([s, ns]: [number, number]) => s * 1000 + ns / 1e6;

/** Writes spans to `file`, tagged with `process` (the role of the process that made them). */
export class FileSpanExporter implements SpanExporter {
  constructor(
    private readonly file: string,
    private readonly process: string,
  ) {}

  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    const lines = spans.map((span) => {
      const line: SpanLine = {
        name: span.name,
        kind: span.kind,
        traceId: span.spanContext().traceId,
        spanId: span.spanContext().spanId,
        parentSpanId: span.parentSpanContext?.spanId,
        startMs: ms(span.startTime),
        endMs: ms(span.endTime),
        status: span.status.code,
        attributes: { ...span.attributes },
        events: span.events.map((e) => ({ name: e.name, ms: ms(e.time), attributes: { ...e.attributes } })),
        links: span.links.map((l) => ({ traceId: l.context.traceId, spanId: l.context.spanId })),
        process: this.process,
      };
      return `${JSON.stringify(line)}\n`;
    });
    appendFileSync(this.file, lines.join(''));
    done({ code: 0 });
  }

  async shutdown(): Promise<void> {}
}

/** The spans written to `file` so far. */
export function readSpans(file: string): SpanLine[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as SpanLine);
}
