/** Worker processes (worker.ts) for the many-process tests. */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerConfig } from './worker.js';

const SCRIPT = fileURLToPath(new URL('./worker.ts', import.meta.url));

export interface WorkerResult {
  name: string;
  ok: number;
  failures: string[];
  ms: number;
}

export interface Worker {
  child: ChildProcessWithoutNullStreams;
  /** Resolves once the worker is set up and waits for `go()`. */
  ready: Promise<void>;
  go(): void;
  /** Its exit code (null when killed) and its result line, if it printed one. */
  exited: Promise<{ code: number | null; result: WorkerResult | undefined; output: string }>;
}

export function startWorker(config: WorkerConfig): Worker {
  const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, JSON.stringify(config)], {
    stdio: 'pipe',
  });
  let output = '';
  let onReady = () => {};
  const ready = new Promise<void>((resolve) => {
    onReady = resolve;
  });
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.includes('ready\n')) onReady();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; result: WorkerResult | undefined; output: string }>(
    (resolve) => {
      child.on('exit', (code) => {
        const line = output.split('\n').find((l) => l.startsWith('{'));
        resolve({ code, result: line ? (JSON.parse(line) as WorkerResult) : undefined, output });
      });
    },
  );
  return { child, ready, go: () => child.stdin.write('go\n'), exited };
}
