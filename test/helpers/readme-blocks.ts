/** The code blocks of the README, for the tests that compile and run them. */
/** A TypeScript block of a Markdown text, with what its marker (`<!-- readme-test: ... -->`) asks. */
export interface Block {
  /** The line of its opening fence. */
  line: number;
  code: string;
  /** `run`: a complete program, to be run against the fake server. */
  run: boolean;
  /** `run commonjs`: a program for a CommonJS project. */
  commonjs: boolean;
}

/** The ```ts blocks of a Markdown text, with the marker on the line before each, if any. */
export function tsBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== '```ts') continue;
    const end = lines.indexOf('```', i + 1);
    const marker = /^<!-- readme-test: (.+) -->$/.exec(lines[i - 1] ?? '')?.[1] ?? '';
    blocks.push({
      line: i + 1,
      code: lines.slice(i + 1, end).join('\n'),
      run: marker.startsWith('run'),
      commonjs: marker.includes('commonjs'),
    });
    i = end;
  }
  return blocks;
}
