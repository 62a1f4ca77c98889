/**
 * `oa example [NAME]`: writes a runnable example into the current folder, for a package user who has no
 * clone of the repository. The examples ship in the package as plain ES modules (dist/examples), so
 * that `node NAME.mjs` runs them in any project, CommonJS or not, with no TypeScript tooling.
 */
import { existsSync } from 'node:fs';
import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { UsageError } from '../errors.js';
import { runAction } from '../run-action.js';

/** The examples, what each shows, and what it needs beyond the package. */
const EXAMPLES: Record<string, { shows: string; needs?: string }> = {
  quickstart: { shows: 'a client, the token it obtains by itself, a text to a user' },
  'webhook-receiver': {
    shows: 'a webhook receiver: inbound text, image, video and voice, replies, a redelivery skipped',
  },
  'support-bot': {
    shows: 'a bot (oa-messaging/bot): a menu, an order lookup kept in the session, a photo answered',
  },
  accounts: {
    shows:
      'many OA accounts (createAccounts): credentials from a database, a webhook path per account, a bot answering through each, a campaign per account',
  },
  campaign: {
    shows: 'a campaign queued in Redis (oa-messaging/queue), every message delivered at most once',
    needs: 'npm install bullmq ioredis, and a redis-server at REDIS_URL (default redis://127.0.0.1:6379)',
  },
};

/** dist/examples of the installed package: the bundle is dist/cli/index.js. */
export function examplesFolder(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  // Up to the package's root (the bundle's folder, or src/cli/commands when run from the sources).
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'dist', 'examples');
}

/** The example and the support modules it imports (relative `./support/*.mjs`), transitively. */
async function filesOf(folder: string, name: string): Promise<string[]> {
  const files = [`${name}.mjs`];
  for (let i = 0; i < files.length; i++) {
    const file = files[i] as string;
    const text = await readFile(join(folder, file), 'utf8');
    for (const [, target] of text.matchAll(/from\s+['"](\.{1,2}\/[^'"]+\.mjs)['"]/g)) {
      const path = relative(folder, resolve(folder, dirname(file), target ?? ''));
      if (!files.includes(path)) files.push(path);
    }
  }
  return files;
}

/** The `example` command. */
export function exampleCommand(): Command {
  return new Command('example')
    .description('write a runnable example into the current folder (no name: list them)')
    .argument('[name]', `one of: ${Object.keys(EXAMPLES).join(', ')}`)
    .option('--dir <dir>', 'write it there instead of the current folder', '.')
    .option('--force', 'overwrite files that are already there')
    .addHelpText(
      'after',
      '\nEach runs with node, against your OA account when OA_BASE_URL, OA_API_KEY and OA_API_SECRET are\nset (and OA_USER_ID, the user who receives its messages), else against a fake OA server it starts.',
    )
    .action((name: string | undefined, options: { dir: string; force?: true }, command: Command) =>
      runAction(command, async (out) => {
        if (name === undefined) {
          const width = Math.max(...Object.keys(EXAMPLES).map((n) => n.length));
          const lines = Object.entries(EXAMPLES).map(([n, e]) => `${n.padEnd(width)}  ${e.shows}`);
          return out.result(Object.keys(EXAMPLES), [...lines, '', 'Write one: oa example NAME']);
        }
        const example = EXAMPLES[name];
        if (!example) {
          throw new UsageError(`no example "${name}": choose one of ${Object.keys(EXAMPLES).join(', ')}`);
        }
        const folder = examplesFolder();
        const files = await filesOf(folder, name);
        // A file already there with the same content (a support module of another example) is no conflict.
        const there: string[] = [];
        for (const file of files) {
          const existing = await readFile(join(options.dir, file), 'utf8').catch(() => undefined);
          if (existing !== undefined && existing !== (await readFile(join(folder, file), 'utf8')))
            there.push(file);
        }
        if (there.length > 0 && !options.force) {
          throw new UsageError(`${there.join(', ')} already there: nothing written (--force overwrites)`);
        }
        for (const file of files) {
          await mkdir(dirname(join(options.dir, file)), { recursive: true });
          await copyFile(join(folder, file), join(options.dir, file));
        }
        const main = join(options.dir, `${name}.mjs`);
        out.result({ files, run: `node ${main}` }, [
          `wrote ${files.join(', ')}`,
          ...(example.needs ? [`It needs: ${example.needs}`] : []),
          `Run it: node ${main}`,
        ]);
      }),
    );
}
