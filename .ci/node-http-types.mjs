#!/usr/bin/env node
// After tsup (`npm run build`): the declarations that name node:http's request and response types
// import them from `http`, declared also by dist/node-http.d.ts, so that they compile in a project
// without Node's types (a Worker, `skipLibCheck: false`), where `node:http` cannot be resolved.
//
// dist/node-http.d.ts declares the module `http` with empty `IncomingMessage` and `ServerResponse`
// interfaces. With @types/node, its declarations merge into Node's own classes (an interface merges
// with a class of the same name and type parameters): a Node project keeps Node's full types.
// Without it, the module exists with those two empty types, which only `createWebhookHandler` names.
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

const DIST = new URL('../dist/', import.meta.url).pathname;
const SHIM = 'node-http.d.ts';

await writeFile(
  join(DIST, SHIM),
  `// See .ci/node-http-types.mjs in the repository: node:http's types for projects without @types/node.
declare module 'http' {
  interface IncomingMessage {}
  interface ServerResponse<Request extends IncomingMessage = IncomingMessage> {}
}
`,
);

let changed = 0;
for (const file of await readdir(DIST, { recursive: true })) {
  if (!/\.d\.c?ts$/.test(file) || file === SHIM) continue;
  const path = join(DIST, file);
  const text = await readFile(path, 'utf8');
  if (!text.includes("from 'node:http'")) continue;
  const shim = relative(join(path, '..'), join(DIST, SHIM)) || SHIM;
  const reference = `/// <reference path="${shim.startsWith('.') ? shim : `./${shim}`}" />\n`;
  await writeFile(path, reference + text.replaceAll("from 'node:http'", "from 'http'"));
  changed++;
}
console.log(`node-http-types: ${changed} declaration files import node:http's types from 'http'`);
