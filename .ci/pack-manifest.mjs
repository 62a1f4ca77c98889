#!/usr/bin/env node
// The package.json that goes into the packed tarball: the repository's without its scripts and
// devDependencies (and the overrides of its own installs), so that installing the package prints no
// warning about a `prepare` script and its manifest lists only what a user installs.
//
// `node .ci/pack-manifest.mjs strip` (prepack) keeps the repository's package.json aside and writes the
// clean one; `node .ci/pack-manifest.mjs restore` (postpack) puts the repository's back. A clone keeps
// its scripts: `npm install` there still builds dist through `prepare`.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const MANIFEST = new URL('../package.json', import.meta.url);
/** The repository's package.json while a pack runs (ignored by git, never packed). */
const KEPT = new URL('../.package.json.packing', import.meta.url);
/** What a user of the package has no use for. */
const REPOSITORY_ONLY = ['scripts', 'devDependencies', 'overrides'];

const [command] = process.argv.slice(2);
if (command === 'strip') {
  // A pack that stopped before its postpack left the repository's manifest aside: start from it.
  const text = readFileSync(existsSync(KEPT) ? KEPT : MANIFEST, 'utf8');
  if (!existsSync(KEPT)) writeFileSync(KEPT, text);
  const manifest = JSON.parse(text);
  for (const field of REPOSITORY_ONLY) delete manifest[field];
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
} else if (command === 'restore') {
  if (existsSync(KEPT)) renameSync(KEPT, MANIFEST);
} else {
  console.error('usage: node .ci/pack-manifest.mjs strip|restore');
  process.exit(2);
}
