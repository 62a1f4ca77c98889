/**
 * Runs the built `oa` binary as a user would: executed through its shebang, in a directory of its own
 * (so that no stray .env is read), with no OA_* variable but those a test gives.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type ExpectStatic, inject, type OnTestFinishedHandler } from 'vitest';
import { createMockServer, type MockServer, type MockServerOptions } from '../../src/testing/index.js';

export const oaBin = inject('oaBin');

/** A working directory for the runs of one test file. */
export const workDir = mkdtempSync(join(tmpdir(), 'oa-cli-'));

const baseEnv: Record<string, string> = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => !entry[0].startsWith('OA_') && entry[1] !== undefined,
    ),
  ),
  // `#!/usr/bin/env node` finds the node running the tests first.
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
};

/**
 * The folder for the token pairs `oa` keeps between commands (`XDG_CONFIG_HOME`): a new one for each
 * run, not the user's, unless the test gives its own. A folder shared by the runs of a file would let
 * a run reuse the pair another test's fake issued: a fake that ends frees its port, and the next one
 * may get it, so the kept pair's base URL and key match, and the 401 and renewal add requests and
 * lines the test does not expect.
 */
export const configHome = () => mkdtempSync(join(workDir, 'config-'));

/** The environment of a run of `oa`: no OA_* variable but those in `env`, a token folder of its own. */
export function oaEnv(env: Record<string, string> = {}): Record<string, string> {
  return { ...baseEnv, ...env, XDG_CONFIG_HOME: env.XDG_CONFIG_HOME ?? configHome() };
}

/** The three settings that point `oa` at a fake server. */
export function envFor(mock: MockServer): Record<string, string> {
  return { OA_BASE_URL: mock.url, OA_API_KEY: mock.apiKey, OA_API_SECRET: mock.apiSecret };
}

/**
 * A fake OA server of the test's own, closed when the test ends: tests that each have one can run
 * concurrently, each asserting on what its fake received.
 */
export async function fakeServer(
  onTestFinished: (fn: OnTestFinishedHandler) => void,
  options: MockServerOptions = {},
): Promise<{ mock: MockServer; env: Record<string, string> }> {
  const mock = await createMockServer(options);
  onTestFinished(() => mock.close());
  return { mock, env: envFor(mock) };
}

export interface RunOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** Written to the command's standard input, which is then closed; else it has none. */
  input?: string;
  /** @default 20_000 */
  timeoutMs?: number;
}

/** A run in progress, for the commands that serve until signalled. */
export interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** Starts `oa ARGS`; the child is killed after `timeoutMs` if it has not ended by then. */
export function startOa(args: string[], options: RunOptions = {}): Started {
  const child = spawn(oaBin, args, {
    cwd: options.cwd ?? workDir,
    env: oaEnv(options.env),
    stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  child.stdin?.end(options.input);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  const exit = new Promise<number | null>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve(code);
    }),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exit };
}

/** The outcome of a finished run. */
export interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `oa ARGS` to its end. */
export async function oa(args: string[], options: RunOptions = {}): Promise<Result> {
  const run = startOa(args, options);
  const code = await run.exit;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

/**
 * Polls a run's output (`stdout` or `stderr` of a {@link Started}) until it matches, within 10 s.
 * `expect` is the test's: its context's where tests run concurrently (see
 * test/conventions/concurrent-expect.test.ts).
 */
export const waitFor = (expect: ExpectStatic, read: () => string, text: string | RegExp) =>
  expect.poll(read, { timeout: 10_000, interval: 50 }).toMatch(text);

/** No key secret and nothing shaped like a JWT. */
export function hasNoSecret(text: string, secret: string): boolean {
  return !text.includes(secret) && !/eyJ[\w-]{8,}\.[\w-]{8,}/.test(text);
}
