/**
 * An `onProgress` callback for the upload methods: a bar redrawn in place on a terminal, and one plain
 * line otherwise (`upload tone.wav: 0% 14% ... 100%`), so logs and CI output stay readable.
 */
import type { UploadProgress } from 'oa-messaging';

const BAR_WIDTH = 24;

export function showProgress(label: string): (progress: UploadProgress) => void {
  const out = process.stdout;
  let last: string | undefined;
  return ({ loaded, total }) => {
    // A stream of unknown length has no total: show the bytes only.
    const percent = total ? Math.floor((loaded / total) * 100) : undefined;
    const amount = percent === undefined ? formatBytes(loaded) : `${percent}%`;
    if (amount === last) return;
    const done = percent === 100;
    if (out.isTTY) {
      const filled = Math.round(((percent ?? 0) / 100) * BAR_WIDTH);
      const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`;
      out.write(`\r${label} ${bar} ${amount.padStart(4)}${done ? '\n' : ''}`);
    } else {
      // A retried upload starts again from 0: on a new line.
      const restart = loaded === 0 && last !== undefined;
      if (last === undefined || restart) out.write(`${restart ? '\n' : ''}${label}:`);
      out.write(` ${amount}${done ? '\n' : ''}`);
    }
    last = done ? undefined : amount;
  };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}
