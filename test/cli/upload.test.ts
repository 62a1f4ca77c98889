import { execFileSync, spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fakeServer, oa, oaBin, oaEnv, workDir } from './run-oa.js';

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/media/${name}`, import.meta.url));

describe.concurrent('oa upload', () => {
  it('image: prints src_file and url; progress as plain lines on a pipe', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const { code, stdout, stderr } = await oa(['upload', 'image', fixture('sample.png')], { env });
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^src_file: uploads\/images\/[\w-]+\.png\nurl: {6}http:\/\/127\.0\.0\.1:\d+\/\S+\.png\n$/,
    );
    expect(stderr).toBe('upload sample.png 0% 0 B/275 B\nupload sample.png 100% 275 B/275 B\n');
    expect(mock.uploads).toMatchObject([{ kind: 'image', filename: 'sample.png', size: 275 }]);
  });

  it('video and audio --json: the answers as JSON, stdout nothing else', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const video = await oa(['upload', 'video', fixture('sample.mov'), '--json'], { env });
    const audio = await oa(['upload', 'audio', fixture('sample.m4a'), '--json'], { env });
    expect([video.code, audio.code]).toEqual([0, 0]);
    expect(JSON.parse(video.stdout)).toEqual({ ticket_id: expect.any(String) });
    expect(JSON.parse(audio.stdout)).toEqual({
      audio_url: expect.any(String),
      audio_uuid: expect.any(String),
      audio_size: expect.any(Number),
      audio_duration: expect.any(Number),
    });
    expect(mock.uploads.map((u) => [u.kind, u.contentType])).toEqual([
      ['video', 'video/quicktime'],
      ['audio', 'audio/mp4'],
    ]);
  });

  it('a larger file: a line at each quarter', async ({ onTestFinished }) => {
    const { env } = await fakeServer(onTestFinished);
    const file = await paddedVideo('quarters.mp4', 2 * 1024 * 1024);
    const { code, stderr } = await oa(['upload', 'video', file], { env });
    expect(code).toBe(0);
    expect(stderr.split('\n').map((line) => /^upload quarters\.mp4 (\d+)%/.exec(line)?.[1])).toEqual([
      '0',
      expect.stringMatching(/^(2[5-9]|[34]\d)$/),
      expect.stringMatching(/^(5\d|6\d|7[0-4])$/),
      expect.stringMatching(/^(7[5-9]|[89]\d)$/),
      '100',
      undefined, // the end of the last line
    ]);
  });

  it('a file the SDK refuses (wrong format, missing): exit 2, nothing sent', async ({ onTestFinished }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const wrong = await oa(['upload', 'image', fixture('not-an-image.png')], { env });
    const missing = await oa(['upload', 'audio', join(workDir, 'missing.mp3')], { env });
    expect([wrong.code, missing.code]).toEqual([2, 2]);
    expect(wrong.stderr).toMatch(
      /^oa: not-an-image\.png is not a recognised image: .* \(nothing was sent\)\n$/,
    );
    expect(missing.stderr).toMatch(/^oa: .*missing\.mp3.* \(nothing was sent\)\n$/);
    expect(mock.uploads).toEqual([]);
  });
});

/** A valid MP4 (the fixture's header) made `size` bytes long: the format is judged by the first bytes. */
async function paddedVideo(name: string, size: number): Promise<string> {
  const head = await readFile(fixture('sample.mp4'));
  const path = join(workDir, name);
  await writeFile(path, Buffer.concat([head, Buffer.alloc(size - head.length)]));
  return path;
}

/** util-linux `script`, which runs a command on a pseudo-terminal and copies what it shows. */
function findScript(): boolean {
  try {
    return execFileSync('script', ['--version'], { encoding: 'utf8' }).includes('util-linux');
  } catch {
    return false;
  }
}
const hasScript = findScript();

describe('oa upload on a terminal', () => {
  it.skipIf(!hasScript)(
    hasScript
      ? 'draws a progress bar, redrawn in place'
      : 'draws a progress bar: SKIPPED, util-linux `script` (the pseudo-terminal it needs) is not installed',
    async ({ onTestFinished }) => {
      const { env } = await fakeServer(onTestFinished);
      const file = await paddedVideo('clip.mp4', 8 * 1024 * 1024);
      // script -q: no banner; -f: flush as it comes; -e: its exit code is the command's; -c: the command.
      const child = spawn('script', ['-qfec', `'${oaBin}' upload video '${file}'`, '/dev/null'], {
        cwd: workDir,
        env: oaEnv(env),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let screen = '';
      child.stdout.on('data', (chunk: Buffer) => {
        screen += chunk.toString();
      });
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      clearTimeout(killer);
      expect(code).toBe(0);
      // The first frame and the last, each drawn from the start of the line (ESC [1G), not on new lines.
      expect(screen).toContain(`\x1b[1Gupload clip.mp4 [${'░'.repeat(30)}] 0% 0 B/8.0 MB`);
      expect(screen).toContain(`\x1b[1Gupload clip.mp4 [${'█'.repeat(30)}] 100% 8.0 MB/8.0 MB`);
      expect(screen).not.toMatch(/^upload clip\.mp4 \d+%/m); // no plain lines on a terminal
      expect(screen).toMatch(/\r\nticket_id: [\w-]+\r\n$/);
    },
  );
});
