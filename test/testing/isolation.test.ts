import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../src/testing/', import.meta.url);

describe('oa-messaging/testing as a package entry', () => {
  it('imports msw only from msw.ts, so the testing entry works without msw installed', () => {
    const importers = readdirSync(SRC).filter((name) =>
      /from ['"]msw(\/[^'"]*)?['"]/.test(readFileSync(new URL(name, SRC), 'utf8')),
    );
    expect(importers).toEqual(['msw.ts']);
  });

  it('leaves no timer or socket behind after close(), even with hung requests', async () => {
    const script = fileURLToPath(new URL('./close-script.ts', import.meta.url));
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    // The child must end by itself; a stray handle would keep it alive until this kill.
    const killer = setTimeout(() => child.kill(), 10_000);
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    clearTimeout(killer);
    expect(output).toContain('handles after close: 0');
    expect(code).toBe(0);
  }, 20_000);
});
