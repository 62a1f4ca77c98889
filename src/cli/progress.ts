/**
 * Progress on stderr, never stdout: a bar redrawn in place (cli-progress) when stderr is a terminal, and
 * on a pipe or in a log a few plain lines (`upload clip.mp4 25% 1.2 MB/4.8 MB`) instead of a stream of
 * control characters.
 */
import { SingleBar } from 'cli-progress';
import type { UploadProgress } from '../index.js';
import { formatBytes } from './format.js';

type ProgressStream = NodeJS.WriteStream | NodeJS.WritableStream;

/** A progress display that must be stopped, whatever happens, before anything else is printed. */
export interface ProgressView<T> {
  update(value: T): void;
  /** Ends the display (the bar keeps its last state on its own line). Safe to call twice. */
  stop(): void;
}

/** The percentages at which a plain line is printed. */
const PLAIN_STEPS = [0, 25, 50, 75, 100];

const isTerminal = (stream: ProgressStream) => (stream as NodeJS.WriteStream).isTTY === true;

/** A bar of `format` (cli-progress tokens) on `stream`, drawn as every `oa` bar is. */
export function progressBar(stream: ProgressStream, format: string): SingleBar {
  return new SingleBar({
    stream: stream as NodeJS.WritableStream,
    format,
    barCompleteChar: '█',
    barIncompleteChar: '░',
    barsize: 30,
    // cli-progress would otherwise hold SIGINT to restore a hidden cursor, and Ctrl+C would not stop oa.
    hideCursor: false,
    gracefulExit: false,
  });
}

/** `upload NAME`: the bytes of one upload as they are sent. */
export function uploadProgress(label: string, stream: ProgressStream): ProgressView<UploadProgress> {
  return isTerminal(stream) ? uploadBar(label, stream) : uploadLines(label, stream);
}

function uploadBar(label: string, stream: ProgressStream): ProgressView<UploadProgress> {
  const bar = progressBar(stream, `${label} [{bar}] {percentage}% {sent}/{size}`);
  let started = false;
  return {
    update({ loaded, total }) {
      // A stream of unknown length has no total: the bar then follows the bytes sent so far.
      const size = total ?? loaded;
      const payload = { sent: formatBytes(loaded), size: total === undefined ? '?' : formatBytes(size) };
      if (!started) {
        bar.start(size, loaded, payload);
        started = true;
        return;
      }
      bar.setTotal(size);
      bar.update(loaded, payload);
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}

function uploadLines(label: string, stream: ProgressStream): ProgressView<UploadProgress> {
  let next = 0;
  return {
    update({ loaded, total }) {
      // A retried upload starts again from 0: so do its lines.
      if (loaded === 0) next = 0;
      // A stream of unknown length has no percentage: one line with the bytes, when it starts.
      const percent = total ? Math.floor((loaded / total) * 100) : next === 0 ? 0 : -1;
      let crossed = false;
      while (next < PLAIN_STEPS.length && percent >= (PLAIN_STEPS[next] ?? 0)) {
        crossed = true;
        next++;
      }
      if (!crossed) return;
      const amount = total ? `${percent}% ${formatBytes(loaded)}/${formatBytes(total)}` : formatBytes(loaded);
      stream.write(`${label} ${amount}\n`);
    },
    stop() {},
  };
}

/** What the transcode display is told: each wait of the SDK, and the end. */
export type TranscodeUpdate = { kind: 'waiting'; attempt: number; waitMs: number } | { kind: 'ready' };

/** `transcode`: the wait while the API converts an uploaded video. */
export function transcodeProgress(label: string, stream: ProgressStream): ProgressView<TranscodeUpdate> {
  if (!isTerminal(stream)) {
    // From the first answer that the video is still converting: an upload may come before it.
    let waitingSince: number | undefined;
    return {
      update(value) {
        if (value.kind === 'waiting') {
          waitingSince ??= performance.now();
          const next = (value.waitMs / 1000).toFixed(1);
          stream.write(`${label} converting; try ${value.attempt + 1} in ${next} s\n`);
        } else if (waitingSince !== undefined) {
          const seconds = ((performance.now() - waitingSince) / 1000).toFixed(1);
          stream.write(`${label} ready after ${seconds} s\n`);
        }
      },
      stop() {},
    };
  }
  // The bar redraws itself (its timer), so the elapsed time moves between the SDK's tries.
  const bar = new SingleBar({
    stream: stream as NodeJS.WritableStream,
    format: `${label} {state} {duration}s`,
    hideCursor: false,
    gracefulExit: false,
  });
  let started = false;
  return {
    update(value) {
      if (value.kind === 'waiting') {
        const state = `converting (try ${value.attempt + 1})`;
        if (started) bar.update(0, { state });
        else bar.start(1, 0, { state });
        started = true;
      } else if (started) {
        bar.update(1, { state: 'ready after' });
      }
    },
    stop() {
      if (started) bar.stop();
      started = false;
    },
  };
}
