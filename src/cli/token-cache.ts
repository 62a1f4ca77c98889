/**
 * The token pair kept between `oa` commands, as `gh` and the Stripe CLI keep theirs: one file per base
 * URL and api key, readable by the user only (0600, in a 0700 folder), holding the pair and never the
 * secret. It is the SDK's `tokenStore`: a pair the server refuses is renewed by the client as always,
 * and the renewed pair written back.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { StoredToken, TokenStore } from '../index.js';

/** The folder of the cached pairs: `OA_CONFIG_DIR`, else `$XDG_CONFIG_HOME/oa`, else `~/.config/oa`. */
export function tokenCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OA_CONFIG_DIR) return join(env.OA_CONFIG_DIR, 'tokens');
  const config = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(config, 'oa', 'tokens');
}

const isStoredToken = (value: unknown): value is StoredToken => {
  const token = value as Partial<StoredToken> | null;
  return (
    typeof token === 'object' &&
    token !== null &&
    typeof token.access_token === 'string' &&
    typeof token.refresh_token === 'string' &&
    typeof token.token_type === 'string' &&
    typeof token.obtained_at === 'number' &&
    typeof token.expires_at === 'number'
  );
};

/**
 * A {@link TokenStore} in files: the pair of `apiKey` at `baseUrl` in a file named by a hash of both.
 * A file it cannot read or write is a pair it does not have: the command then logs in, as without a
 * cache, rather than failing.
 */
export class FileTokenStore implements TokenStore {
  readonly #dir: string;
  readonly #baseUrl: string;

  constructor(baseUrl: string, dir: string = tokenCacheDir()) {
    this.#dir = dir;
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
  }

  /** The file of `apiKey`'s pair: neither the key nor the base URL appear in its name or contents. */
  fileOf(apiKey: string): string {
    const id = createHash('sha256').update(`${this.#baseUrl}\n${apiKey}`).digest('hex').slice(0, 32);
    return join(this.#dir, `${id}.json`);
  }

  get(apiKey: string): StoredToken | undefined {
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.fileOf(apiKey), 'utf8'));
      return isStoredToken(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }

  set(apiKey: string, token: StoredToken): void {
    const { access_token, refresh_token, token_type, obtained_at, expires_at } = token;
    const text = JSON.stringify({ access_token, refresh_token, token_type, obtained_at, expires_at });
    const file = this.fileOf(apiKey);
    // Written whole then renamed: two commands at once never leave half a file, and the mode is the
    // new file's, whatever an older one had.
    const partial = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
      writeFileSync(partial, text, { mode: 0o600 });
      renameSync(partial, file);
    } catch {
      rmSync(partial, { force: true });
    }
  }

  delete(apiKey: string): void {
    rmSync(this.fileOf(apiKey), { force: true });
  }

  /** Removes every cached pair; returns how many there were. */
  clear(): number {
    let names: string[];
    try {
      names = readdirSync(this.#dir).filter((name) => name.endsWith('.json'));
    } catch {
      return 0;
    }
    for (const name of names) rmSync(join(this.#dir, name), { force: true });
    return names.length;
  }
}
