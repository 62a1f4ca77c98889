/** The code blocks of the README and the guides, for the tests that compile and run them. */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Markdown pages a reader of the repository or the package follows, relative to the repository's
 * root: README.md, CONTRIBUTING.md and the guides (docs/*.md; not the generated API reference).
 */
export function docPages(root: string): string[] {
  const guides = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', 'CONTRIBUTING.md', ...guides];
}

/** The guides alone: docs/*.md. */
export const guidePages = (root: string): string[] =>
  docPages(root).filter((page) => page.startsWith('docs/'));
/** A TypeScript block of a Markdown text, with what its marker (`<!-- readme-test: ... -->`) asks. */
export interface Block {
  /** The line of its opening fence. */
  line: number;
  code: string;
  /** `run`: a complete program, to be run against the fake server. */
  run: boolean;
  /** `run commonjs`: a program for a CommonJS project. */
  commonjs: boolean;
  /**
   * A webhook receiver recipe of a framework (`receiver NAME`: a server listening on `PORT`, to be
   * posted an event; `route-handler NAME`: a module exporting `POST(request)`; `echo NAME`: an echo
   * bot that replies through the client; `compiled NAME`: compiled only), or `undefined`.
   */
  recipe: { kind: 'receiver' | 'route-handler' | 'echo' | 'compiled'; name: string } | undefined;
  /**
   * The runtime a `<!-- runtime: NAME -->` marker names (`workerd`, `deno`, `bun`): a complete program
   * for that runtime, which the runtime suites take from docs/runtimes.md and run there.
   */
  runtime: string | undefined;
}

/** The ```ts blocks of a Markdown text, with the marker on the line before each, if any. */
export function tsBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    const marker = /^<!-- readme-test: (.+) -->$/.exec(lines[i - 1] ?? '')?.[1] ?? '';
    const runtime = /^<!-- runtime: ([\w-]+) -->$/.exec(lines[i - 1] ?? '')?.[1];
    blocks.push({
      line: i + 1,
      code: lines.slice(i + 1, end).join('\n'),
      run: marker.startsWith('run'),
      commonjs: marker.includes('commonjs'),
      recipe: recipeOf(marker),
      runtime,
    });
    i = end;
  }
  return blocks;
}

function recipeOf(marker: string): Block['recipe'] {
  const [kind, name] = marker.split(' ');
  if (name === undefined) return undefined;
  if (kind === 'receiver' || kind === 'route-handler' || kind === 'echo' || kind === 'compiled') {
    return { kind, name };
  }
  return undefined;
}
