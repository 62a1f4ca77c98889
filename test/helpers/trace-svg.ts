/**
 * Draws one trace as an SVG waterfall: a row per span (indented under its parent, in order of start),
 * its name and the process that made it, a bar from its start to its end, its events as ticks. The
 * picture of a trace in docs/observability.md is drawn by this from the spans of test/telemetry/trace.test.ts.
 */
import type { SpanLine } from '../telemetry/span-file.js';

const WIDTH = 1200;
const NAMES = 400;
const LABELS = 530;
const RIGHT = 24;
const ROW = 30;
const TOP = 64;
const COLOURS: Record<string, string> = {
  receiver: '#4c78a8',
  handler: '#59a14f',
  sender: '#e68a2e',
};
const KINDS = ['internal', 'server', 'client', 'producer', 'consumer'];

const escapeXml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** The spans of one trace, parents before their children, siblings by start time, with their depth. */
function ordered(spans: readonly SpanLine[]): { span: SpanLine; depth: number }[] {
  const ids = new Set(spans.map((s) => s.spanId));
  const byStart = [...spans].sort((a, b) => a.startMs - b.startMs);
  const rows: { span: SpanLine; depth: number }[] = [];
  const visit = (parent: string | undefined, depth: number) => {
    for (const span of byStart) {
      const root = span.parentSpanId === undefined || !ids.has(span.parentSpanId);
      if (parent === undefined ? root : span.parentSpanId === parent) {
        rows.push({ span, depth });
        visit(span.spanId, depth + 1);
      }
    }
  };
  visit(undefined, 0);
  return rows;
}

/** A round step for the time axis: about six ticks over `totalMs`. */
function step(totalMs: number): number {
  const rough = totalMs / 6;
  const power = 10 ** Math.floor(Math.log10(rough));
  return ([1, 2, 5, 10].map((m) => m * power).find((s) => s >= rough) ?? rough) as number;
}

/** The SVG of the trace made of `spans` (all of one trace). */
export function traceSvg(spans: readonly SpanLine[], title: string): string {
  const rows = ordered(spans);
  const start = Math.min(...spans.map((s) => s.startMs));
  const end = Math.max(...spans.map((s) => s.endMs));
  const total = Math.max(end - start, 1);
  const plot = WIDTH - LABELS - RIGHT;
  const x = (ms: number) => LABELS + ((ms - start) / total) * plot;
  const height = TOP + rows.length * ROW + 56;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="13" role="img" aria-labelledby="trace-title">`,
    `<title id="trace-title">${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="16" y="26" font-size="16" font-weight="bold" fill="#222">${escapeXml(title)}</text>`,
  ];
  const every = step(total);
  for (let t = 0; t <= total; t += every) {
    const at = x(start + t).toFixed(1);
    out.push(
      `<line x1="${at}" y1="${TOP - 14}" x2="${at}" y2="${TOP + rows.length * ROW}" stroke="#e4e4e4"/>`,
      `<text x="${at}" y="${TOP - 20}" text-anchor="middle" fill="#777" font-size="11">${t} ms</text>`,
    );
  }
  rows.forEach(({ span, depth }, i) => {
    const y = TOP + i * ROW;
    const colour = COLOURS[span.process] ?? '#888';
    const failed = span.status === 2;
    const status = span.attributes['http.response.status_code'];
    if (i % 2 === 1) out.push(`<rect x="0" y="${y}" width="${WIDTH}" height="${ROW}" fill="#f7f7f7"/>`);
    out.push(
      `<text x="${16 + depth * 16}" y="${y + 19}" fill="#222">${escapeXml(span.name)}</text>`,
      `<text x="${NAMES}" y="${y + 19}" fill="${colour}" font-size="11">${escapeXml(
        `${span.process} · ${KINDS[span.kind] ?? span.kind}`,
      )}</text>`,
    );
    const left = x(span.startMs);
    const width = Math.max(x(span.endMs) - left, 2);
    out.push(
      `<rect x="${left.toFixed(1)}" y="${y + 7}" width="${width.toFixed(1)}" height="${ROW - 14}" rx="2" fill="${colour}"${
        failed ? ' stroke="#c0392b" stroke-width="2"' : ''
      }/>`,
    );
    const note = `${(span.endMs - span.startMs).toFixed(1)} ms${status === undefined ? '' : ` · ${status}`}`;
    const after = left + width + 6;
    const inside = after + 90 > WIDTH;
    out.push(
      `<text x="${(inside ? left - 6 : after).toFixed(1)}" y="${y + 19}" text-anchor="${inside ? 'end' : 'start'}" fill="${
        failed ? '#c0392b' : '#555'
      }" font-size="11">${escapeXml(note)}</text>`,
    );
    for (const event of span.events) {
      const at = x(event.ms).toFixed(1);
      out.push(
        `<line x1="${at}" y1="${y + 3}" x2="${at}" y2="${y + ROW - 3}" stroke="#222" stroke-width="2"/>`,
        `<text x="${(Number(at) + 5).toFixed(1)}" y="${y + 12}" fill="#222" font-size="10" font-weight="bold" stroke="#fff" stroke-width="3" paint-order="stroke">${escapeXml(event.name)}</text>`,
      );
    }
  });
  const legend = TOP + rows.length * ROW + 30;
  let lx = 16;
  for (const [process, colour] of Object.entries(COLOURS)) {
    out.push(
      `<rect x="${lx}" y="${legend - 10}" width="12" height="12" fill="${colour}"/>`,
      `<text x="${lx + 18}" y="${legend}" fill="#444" font-size="12">${process} process</text>`,
    );
    lx += 150;
  }
  out.push(
    `<line x1="${lx}" y1="${legend - 11}" x2="${lx}" y2="${legend + 2}" stroke="#222" stroke-width="2"/>`,
    `<text x="${lx + 8}" y="${legend}" fill="#444" font-size="12">span event</text>`,
    `<rect x="${lx + 110}" y="${legend - 10}" width="12" height="12" fill="#fff" stroke="#c0392b" stroke-width="2"/>`,
    `<text x="${lx + 128}" y="${legend}" fill="#444" font-size="12">status ERROR</text>`,
    '</svg>',
  );
  return `${out.join('\n')}\n`;
}
