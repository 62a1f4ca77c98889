/**
 * In a file whose tests run concurrently (`describe.concurrent`, `it.concurrent`), the `expect`
 * imported from vitest knows only the test that started last, and none once any of them has ended.
 * `expect.poll`, `expect.soft`, `expect.assertions` and snapshots need the test they belong to: called
 * on that `expect` while another test of the file has just ended, they throw "expect.poll() must be
 * called inside a test" (or count for the wrong test). They must use the `expect` of the test's own
 * context, `async ({ expect }) => ...`, or one handed down as a parameter.
 *
 * Each file with concurrent tests, and each module it imports by a relative path (a helper), is read
 * with the TypeScript parser: each such call on an `expect` that no enclosing function binds (by a
 * parameter, destructured or not) is the module's import, and is named.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The members of `expect` that look up the current test. */
const NEEDS_TEST = new Set(['poll', 'soft', 'assertions', 'hasAssertions']);
/** The matchers that record into the current test's snapshot. */
const SNAPSHOTS = new Set([
  'toMatchSnapshot',
  'toMatchInlineSnapshot',
  'toMatchFileSnapshot',
  'toThrowErrorMatchingSnapshot',
  'toThrowErrorMatchingInlineSnapshot',
]);

/** Every TypeScript file under test/. */
const testSources = (): string[] =>
  readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((file) => /\.tsx?$/.test(file) && !file.includes('node_modules'))
    .map((file) => join(ROOT, 'test', file));

/** Whether a function between `node` and the file binds `expect` as (part of) a parameter. */
function boundByParameter(node: ts.Node): boolean {
  const binds = (name: ts.BindingName): boolean =>
    ts.isIdentifier(name)
      ? name.text === 'expect'
      : name.elements.some((element) => !ts.isOmittedExpression(element) && binds(element.name));
  for (let at = node.parent; at; at = at.parent) {
    if (ts.isFunctionLike(at) && at.parameters.some((parameter) => binds(parameter.name))) return true;
  }
  return false;
}

/** Each `expect.poll(...)`-like use, and each snapshot matcher, on the imported `expect`: `file:line`. */
function moduleExpectUses(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAccessExpression(node)) {
      const member = node.name.text;
      let root: ts.Expression = node.expression;
      // expect(x).a.b.toMatchSnapshot(): down the chain to `expect`.
      while (ts.isPropertyAccessExpression(root) || ts.isCallExpression(root)) root = root.expression;
      const onExpect =
        ts.isIdentifier(node.expression) && node.expression.text === 'expect' && NEEDS_TEST.has(member);
      const snapshot = SNAPSHOTS.has(member) && ts.isIdentifier(root) && root.text === 'expect';
      if ((onExpect || snapshot) && !boundByParameter(node)) {
        const { line } = file.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${relative(ROOT, path)}:${line + 1} expect…${member}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The files with concurrent tests, and the modules they import by relative paths, transitively. */
function concurrentAndTheirHelpers(): Map<string, string> {
  const files = new Map<string, string>();
  const add = (path: string) => {
    if (files.has(path)) return;
    const text = readFileSync(path, 'utf8');
    files.set(path, text);
    for (const [, specifier] of text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)) {
      const target = resolve(dirname(path), (specifier as string).replace(/\.js$/, '.ts'));
      // The SDK's own sources use no vitest.
      if (target.startsWith(join(ROOT, 'test')) && target.endsWith('.ts')) add(target);
    }
  };
  for (const path of testSources()) {
    if (/\b(describe|it|test)\.concurrent\b|\bconcurrent:\s*true\b/.test(readFileSync(path, 'utf8')))
      add(path);
  }
  return files;
}

describe('tests that run concurrently use their own expect', () => {
  it("expect.poll, expect.soft, expect.assertions and snapshots use the test context's expect", () => {
    const files = concurrentAndTheirHelpers();
    expect(files.size).toBeGreaterThan(10);
    expect([...files].flatMap(([path, text]) => moduleExpectUses(path, text))).toEqual([]);
  });

  it('finds such a call on the imported expect, and lets one on a bound expect be', () => {
    const text = `import { describe, expect, it } from 'vitest';
const waitFor = (read: () => string) => expect.poll(read).toMatch(/x/);
const handed = (expect: typeof import('vitest').expect) => expect.poll(() => 1).toBe(1);
describe.concurrent('d', () => {
  it('a', async () => { expect.soft(1).toBe(1); expect({}).toMatchSnapshot(); });
  it('b', async ({ expect }) => { await expect.poll(() => 1).toBe(1); expect({}).toMatchSnapshot(); });
});`;
    expect(moduleExpectUses(join(ROOT, 'test/x.test.ts'), text)).toEqual([
      'test/x.test.ts:2 expect…poll',
      'test/x.test.ts:5 expect…soft',
      'test/x.test.ts:5 expect…toMatchSnapshot',
    ]);
  });
});
