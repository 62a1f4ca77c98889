/**
 * The progress of an outbox campaign on stderr: a bar of the jobs that ended (delivered, failed or
 * unknown) out of all known, redrawn in place on a terminal; on a pipe or in a log, one plain line at
 * 0, 25, 50, 75 and 100%.
 */
import type { OutboxCounts } from '../queue/index.js';
import { type ProgressView, progressBar } from './progress.js';

type ProgressStream = NodeJS.WriteStream | NodeJS.WritableStream;

/** Jobs that ended, and all jobs known. */
export function campaignTotals(counts: OutboxCounts): { done: number; total: number } {
  const done = counts.delivered + counts.failed + counts.unknown;
  return { done, total: done + counts.waiting + counts.delayed + counts.active + (counts.orphaned ?? 0) };
}

/** The one-line summary of counts. */
export function countsLine(c: OutboxCounts): string {
  const orphaned = c.orphaned
    ? `, orphaned ${c.orphaned} (their worker died: taken by another within lockDurationMs)`
    : '';
  return `delivered ${c.delivered}, failed ${c.failed}, unknown ${c.unknown}, waiting ${c.waiting}, delayed ${c.delayed}, active ${c.active}${orphaned}`;
}

/** `outbox`: the campaign's progress. */
export function campaignProgress(stream: ProgressStream): ProgressView<OutboxCounts> {
  if ((stream as NodeJS.WriteStream).isTTY !== true) {
    let next = 0;
    return {
      update(counts) {
        const { done, total } = campaignTotals(counts);
        const percent = total === 0 ? 100 : Math.floor((done / total) * 100);
        let crossed = false;
        while (next <= 100 && percent >= next) {
          crossed = true;
          next += 25;
        }
        if (crossed) stream.write(`outbox ${percent}% ${done}/${total} (${countsLine(counts)})\n`);
      },
      stop() {},
    };
  }
  const bar = progressBar(
    stream,
    'outbox [{bar}] {percentage}% {value}/{total} delivered {delivered} failed {failed} unknown {unknown}',
  );
  let started = false;
  return {
    update(counts) {
      const { done, total } = campaignTotals(counts);
      const payload = { delivered: counts.delivered, failed: counts.failed, unknown: counts.unknown };
      if (!started) {
        bar.start(total, done, payload);
        started = true;
        return;
      }
      bar.setTotal(total);
      bar.update(done, payload);
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}
