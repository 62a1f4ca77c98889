import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/index.js';
import { oa, oaBin } from './run-oa.js';

/** Every command of `oa`, as typed. */
const COMMANDS = [
  [],
  ['token'],
  ['send'],
  ['send', 'text'],
  ['send', 'greeting'],
  ['send', 'image'],
  ['send', 'audio'],
  ['send', 'video'],
  ['broadcast'],
  ['upload'],
  ['upload', 'image'],
  ['upload', 'video'],
  ['upload', 'audio'],
  ['webhook'],
  ['webhook', 'listen'],
  ['mock-server'],
];

describe('usage', () => {
  it('--help on every command: its usage on stdout, exit 0', async () => {
    const runs = await Promise.all(COMMANDS.map((command) => oa([...command, '--help'])));
    runs.forEach((run, index) => {
      const command = COMMANDS[index] ?? [];
      expect({ command, code: run.code, stderr: run.stderr }).toEqual({ command, code: 0, stderr: '' });
      expect(run.stdout).toMatch(new RegExp(`^Usage: ${['oa', ...command].join(' ')} `));
    });
    const [root, token] = runs;
    expect(root?.stdout).toContain('Exit codes: 0 success, 1 API or network error, 2 usage error');
    // Every command that calls the API says where its settings come from.
    for (const option of [
      '--base-url <url>',
      '--api-key <key>',
      '--api-secret <secret>',
      '--dotenv <path>',
      '--json',
    ]) {
      expect(token?.stdout).toContain(option);
    }
  });

  it('--version', async () => {
    const { code, stdout } = await oa(['--version']);
    expect(code).toBe(0);
    expect(stdout).toBe(`${VERSION}\n`);
  });

  it('usage errors exit 2 with a message and a pointer to --help', async () => {
    const runs = await Promise.all([
      oa(['bogus']),
      oa(['token', '--bogus']),
      oa(['token', '--timeout', 'soon']),
      oa(['webhook', 'listen', '--port', '70000']),
      oa(['upload', 'image']),
      oa(['send']),
    ]);
    expect(runs.map((run) => run.code)).toEqual([2, 2, 2, 2, 2, 2]);
    const firstLines = runs.map((run) => run.stderr.split('\n')[0]);
    expect(firstLines.slice(0, 5)).toEqual([
      "oa: unknown command 'bogus'",
      "oa: unknown option '--bogus'",
      "oa: option '--timeout <ms>' argument 'soon' is invalid. Not a positive integer.",
      "oa: option '--port <port>' argument '70000' is invalid. Not a port number (0-65535).",
      "oa: missing required argument 'file'",
    ]);
    for (const run of runs.slice(0, 5)) expect(run.stderr).toContain('(add --help for usage)');
    // A command that needs a subcommand shows its help, as an error.
    expect(runs[5]?.stderr).toMatch(/^Usage: oa send /);
    for (const run of runs) expect(run.stdout).toBe('');
  });
});

describe('a reader that stops early', () => {
  it('oa --help | head -1: the first line, and no EPIPE crash', async () => {
    const env = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
    const { stdout, stderr } = await promisify(execFile)(
      'sh',
      ['-c', `"${oaBin}" --help | head -1; "${oaBin}" broadcast --help | head -1`],
      { env, timeout: 20_000 },
    );
    expect(stdout).toBe('Usage: oa [options] [command]\nUsage: oa broadcast [options]\n');
    expect(stderr).toBe('');
  });
});
