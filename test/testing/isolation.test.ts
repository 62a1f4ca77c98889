import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runScript } from '../helpers/run-script.js';

const SRC = new URL('../../src/testing/', import.meta.url);

describe('oa-messaging/testing as a package entry', () => {
  it('imports msw only from msw.ts, so the testing entry works without msw installed', () => {
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter((name) =>
      name.endsWith('.ts'),
    );
    const importers = files.filter((name) =>
      /from ['"]msw(\/[^'"]*)?['"]/.test(readFileSync(new URL(name, SRC), 'utf8')),
    );
    expect(importers).toEqual(['msw.ts']);
  });

  it('leaves no timer or socket behind after close(), even with hung requests', async () => {
    const { code, output } = await runScript(new URL('./close-script.ts', import.meta.url));
    expect(output).toContain('handles after close: 0');
    expect(code).toBe(0);
  }, 20_000);
});
