// No function of the outbox and inbox (src/queue) is longer than a reader can hold: at most 250
// lines, counted from its first line to its last, as the TypeScript parser finds them.
import { readdirSync, readFileSync } from 'node:fs';
import ts from 'typescript';
import { expect, it } from 'vitest';

const MOST_LINES = 250;

it(`every function of src/queue is at most ${MOST_LINES} lines`, () => {
  const dir = new URL('../../src/queue/', import.meta.url);
  const long: string[] = [];
  for (const name of readdirSync(dir).filter((file) => file.endsWith('.ts'))) {
    const text = readFileSync(new URL(name, dir), 'utf8');
    const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && 'body' in node && node.body) {
        const first = source.getLineAndCharacterOfPosition(node.getStart()).line;
        const last = source.getLineAndCharacterOfPosition(node.end).line;
        if (last - first + 1 > MOST_LINES) long.push(`${name}:${first + 1} (${last - first + 1} lines)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  expect(long).toEqual([]);
});
