/** The runtime recipes of docs/runtimes.md: code blocks marked `<!-- runtime: workerd|deno|bun -->`. */

export type RecipeRuntime = 'workerd' | 'deno' | 'bun';

/** A recipe: the runtime it is for, its code, its language and the line of its opening fence. */
export interface Recipe {
  runtime: RecipeRuntime;
  code: string;
  /** The fence's language: `ts` or `js`, which picks the file's extension. */
  lang: 'ts' | 'js';
  line: number;
}

const FENCE = /^```(ts|typescript|js|javascript)\s*$/;

/** The code blocks right after a `<!-- runtime: X -->` line, in order. */
export function runtimeRecipes(markdown: string): Recipe[] {
  const lines = markdown.split('\n');
  const recipes: Recipe[] = [];
  for (let i = 0; i < lines.length - 1; i++) {
    const runtime = /^<!-- runtime: (workerd|deno|bun) -->\s*$/.exec(lines[i] ?? '')?.[1] as
      | RecipeRuntime
      | undefined;
    const fence = FENCE.exec(lines[i + 1] ?? '');
    if (!runtime || !fence) continue;
    const end = lines.indexOf('```', i + 2);
    if (end < 0) throw new Error(`line ${i + 2}: the ${runtime} recipe's code block is not closed`);
    const lang = fence[1]?.startsWith('t') ? 'ts' : 'js';
    recipes.push({ runtime, code: lines.slice(i + 2, end).join('\n'), lang, line: i + 2 });
    i = end;
  }
  return recipes;
}

/** What a Worker recipe needs bound besides its text settings, from how it uses `env.NAME`. */
export function workerStoreBindings(code: string): { name: string; kind: 'kv' | 'queue' }[] {
  const found = new Map<string, 'kv' | 'queue'>();
  for (const [, name, method] of code.matchAll(
    /env\.([A-Za-z_][A-Za-z0-9_]*)\.(put|get|delete|list|send|sendBatch)\(/g,
  )) {
    if (!name) continue;
    found.set(name, method === 'send' || method === 'sendBatch' ? 'queue' : 'kv');
  }
  return [...found].map(([name, kind]) => ({ name, kind }));
}
