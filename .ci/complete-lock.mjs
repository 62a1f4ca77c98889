#!/usr/bin/env node
// Adds to package-lock.json the platform-specific optional packages that npm left out of it.
//
// npm writes a lock entry only for optional packages whose manifest it could fetch; when a registry
// lacks another platform's build (a mirror), or through npm's own bug (npm/cli#4828, #8320), the lock
// lists e.g. `@rollup/rollup-darwin-arm64` among rollup's optionalDependencies with no entry of its
// own, and `npm ci` then refuses the lock as out of sync. The entry added here carries the version
// and the platform (os, cpu, libc) read from the package name, so npm skips it on every other
// platform and never fetches it there. Run after changing dependencies; `.ci/run` runs it too.
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const OSES = [
  'aix',
  'android',
  'darwin',
  'freebsd',
  'linux',
  'netbsd',
  'openbsd',
  'openharmony',
  'sunos',
  'win32',
];
const CPUS = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 'riscv64', 's390x', 'loong64', 'mips64el', 'wasm32'];

/** `@rollup/rollup-linux-x64-musl` -> { os: ['linux'], cpu: ['x64'], libc: ['musl'] } */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OSES.includes(p));
  const cpu = parts.find((p) => CPUS.includes(p)) ?? (parts.includes('arm') ? 'arm' : undefined);
  if (!os || !cpu) return undefined;
  const libc = parts.some((p) => p.startsWith('musl')) ? 'musl' : parts.includes('gnu') ? 'glibc' : undefined;
  return { os, cpu, libc };
}

const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const added = [];
for (const [path, entry] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(entry.optionalDependencies ?? {})) {
    // npm resolves a dependency next to its parent first, then at the top.
    const nested = `${path}/node_modules/${dep}`;
    const top = `node_modules/${dep}`;
    if (lock.packages[nested] || lock.packages[top]) continue;
    const platform = platformOf(dep);
    if (!platform || !/^\d+\.\d+\.\d+/.test(version)) continue;
    // Fields in npm's own order, so that a later `npm install` leaves the entry as it is.
    lock.packages[top] = {
      version,
      cpu: [platform.cpu],
      ...(entry.dev ? { dev: true } : {}),
      ...(platform.libc ? { libc: [platform.libc] } : {}),
      optional: true,
      os: [platform.os],
    };
    added.push(`${dep}@${version}`);
  }
}
if (added.length > 0) {
  lock.packages = Object.fromEntries(
    Object.entries(lock.packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
  );
  writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
}
console.log(`complete-lock: ${added.length} platform entr${added.length === 1 ? 'y' : 'ies'} added`);
