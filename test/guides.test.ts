import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, githubSlug, linksOf } from './helpers/doc-links.js';
import { docPages, guidePages } from './helpers/readme-blocks.js';

/**
 * The README and the guides under docs/, as a reader finds them on GitHub or in the package: every
 * relative link and `#anchor` resolves, the README stays short and leads to every guide, and each guide
 * stays one topic's length, with a contents list once it is long. Their code blocks are compiled by
 * test/readme.test.ts.
 */
const root = new URL('..', import.meta.url).pathname;
/** Folders a build writes (ignored by git): the API reference, by `npm run docs`. */
const GENERATED = ['docs/api'];
const lines = (text: string) => text.replace(/\n$/, '').split('\n').length;
const read = (page: string) => readFile(join(root, page), 'utf8');

describe('the link check', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('makes anchors as GitHub does: code, punctuation and emphasis out, spaces to -, repeats numbered', () => {
    expect(githubSlug('Receiving messages (webhook)')).toBe('receiving-messages-webhook');
    expect(githubSlug('`deliveryUnknown`')).toBe('deliveryunknown');
    expect(githubSlug('Deadlines, cancelling and `close()`')).toBe('deadlines-cancelling-and-close');
    expect(githubSlug("What BullMQ's own tools do to an outbox queue")).toBe(
      'what-bullmqs-own-tools-do-to-an-outbox-queue',
    );
    expect(githubSlug('Bots (`oa-messaging/bot`)')).toBe('bots-oa-messagingbot');
    expect(githubSlug('The map of `src/`')).toBe('the-map-of-src');
    expect(githubSlug('Retries: a message is never sent twice')).toBe(
      'retries-a-message-is-never-sent-twice',
    );
    const page = ['# T', '## Options', '```sh', '# not a heading', '```', '## Options', '<a id="here"></a>'];
    expect([...anchorsOf(page.join('\n'))]).toEqual(['t', 'options', 'options-1', 'here']);
  });

  it('finds links and images outside code, and reports a missing file, a missing anchor and a way out', async () => {
    const sample = '[a](b.md) `[c](d.md)` ![e](f.png "t")\n```\n[g](h.md)\n```\ntext [two\nlines](i.md#j)';
    expect(linksOf(sample)).toEqual([
      { line: 1, target: 'b.md' },
      { line: 1, target: 'f.png' },
      { line: 5, target: 'i.md#j' },
    ]);
    dir = await mkdtemp(join(tmpdir(), 'oa-links-'));
    await mkdir(join(dir, 'docs'));
    await writeFile(join(dir, 'README.md'), '# Top\n\n## Install\n');
    await writeFile(
      join(dir, 'docs', 'guide.md'),
      [
        '# Guide',
        '## Usage',
        '[ok](../README.md#install) [ok](#usage) [ok](https://example.com/#x) [ok](api/README.md)',
        '[file](missing.md) [anchor](../README.md#usage) [own](#install) [out](../../x.md)',
      ].join('\n'),
    );
    expect(brokenLinks(dir, 'docs/guide.md', ['docs/api'])).toEqual([
      'docs/guide.md:4 missing.md: no such file',
      'docs/guide.md:4 ../README.md#usage: no heading of README.md makes #usage',
      'docs/guide.md:4 #install: no heading of docs/guide.md makes #install',
      'docs/guide.md:4 ../../x.md: outside the repository',
    ]);
  });
});

describe('the README and the guides', () => {
  it('every relative link and #anchor of README.md, CONTRIBUTING.md and docs/*.md resolves', () => {
    const pages = docPages(root);
    expect(pages.length).toBeGreaterThan(10);
    expect(pages.flatMap((page) => brokenLinks(root, page, GENERATED))).toEqual([]);
  });

  it('the README is at most 300 lines and links every guide', async () => {
    const readme = await read('README.md');
    expect(lines(readme)).toBeLessThanOrEqual(300);
    const linked = new Set(linksOf(readme).map((link) => link.target.split('#')[0]));
    const guides = guidePages(root);
    expect(guides.length).toBeGreaterThanOrEqual(8);
    expect(guides.filter((guide) => !linked.has(guide))).toEqual([]);
    expect(linked).toContain('CONTRIBUTING.md');
  });

  it('each guide is at most 700 lines, with a contents list linking its sections once over 120', async () => {
    for (const guide of guidePages(root)) {
      const text = await read(guide);
      expect(lines(text), guide).toBeLessThanOrEqual(700);
      if (lines(text) <= 120) continue;
      const contents = /^## Contents\n\n((?:\s*- .*\n)+)/m.exec(text)?.[1];
      expect(contents, `${guide} has a "## Contents" list`).toBeDefined();
      const listed = [...(contents ?? '').matchAll(/\]\(#([^)]+)\)/g)].map(([, anchor]) => anchor);
      const sections = [...text.matchAll(/^## (.+)$/gm)]
        .map(([, heading]) => githubSlug(heading ?? ''))
        .filter((anchor) => anchor !== 'contents');
      expect(
        sections.filter((anchor) => !listed.includes(anchor)),
        guide,
      ).toEqual([]);
    }
  });

  it('the runtimes table of the README is the one of docs/runtimes.md', async () => {
    const table = (text: string) =>
      text.split('\n').filter((line) => /^\| .*\| Vercel|^\| `oa-messaging|^\| Uploads/.test(line));
    const readme = table(await read('README.md'));
    expect(readme.length).toBeGreaterThan(5);
    expect(table(await read('docs/runtimes.md'))).toEqual(readme);
  });
});
