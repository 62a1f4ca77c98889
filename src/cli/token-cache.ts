/**
 * The token pair kept between `oa` commands, as `gh` and the Stripe CLI keep theirs: one file per base
 * URL and api key, readable by the user only (0600, in a 0700 folder), holding the pair and never the
 * secret. It is the SDK's `tokenStore`: a pair the server refuses is renewed by the client as always,
 * and the renewed pair written back.
 *
 * The file is trusted no more than its path (issue 51): a folder others can write could hold a pair
 * planted under our file name (our messages would go to another OA), a named pipe would hang the
 * read, a link would read or change another file. So only a regular file of the user's, of at most
 * 1 MiB, is read; loose modes are tightened; and each entry carries a MAC of its pair under a key
 * derived from the base URL, api key and api secret with a salted, slow hash, so that an entry is used
 * only by the secret that kept it, and the file does not give the secret away.
 */
import { createHash, createHmac, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { StoredToken, TokenStore } from '../index.js';

/** The folder of the cached pairs: `OA_CONFIG_DIR`, else `$XDG_CONFIG_HOME/oa`, else `~/.config/oa`. */
export function tokenCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.OA_CONFIG_DIR) return join(env.OA_CONFIG_DIR, 'tokens');
  const config = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(config, 'oa', 'tokens');
}

/** An entry is a few hundred bytes: anything larger is not ours, and is not read into memory. */
const MAX_FILE_BYTES = 1024 * 1024;

/**
 * scrypt at N = 2^14, r = 8, p = 1 (16 MiB, Node's default cost): about 30 ms on a laptop core, paid
 * once per command that reads or writes the file (the key is kept in memory after), so a shell loop
 * stays snappy, while each guess at the secret from a copy of the file costs the same.
 */
const SCRYPT = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const KDF_NAME = 'scrypt-n16384-r8-p1';

/** How an entry is bound to its base URL, api key and secret; absent from a file of an older `oa`. */
interface Binding {
  kdf: string;
  /** Random per entry (base64). */
  salt: string;
  /** HMAC-SHA256 of the pair under the key scrypt derives (base64). */
  mac: string;
}

const TOKEN_FIELDS = ['access_token', 'refresh_token', 'token_type', 'obtained_at', 'expires_at'] as const;

const pairOf = (token: StoredToken): StoredToken => {
  const { access_token, refresh_token, token_type, obtained_at, expires_at } = token;
  return { access_token, refresh_token, token_type, obtained_at, expires_at };
};

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

const isBinding = (value: unknown): value is Binding => {
  const binding = value as Partial<Binding> | null;
  return (
    typeof binding === 'object' &&
    binding !== null &&
    binding.kdf === KDF_NAME &&
    typeof binding.salt === 'string' &&
    typeof binding.mac === 'string'
  );
};

const macOf = (key: Buffer, token: StoredToken) =>
  createHmac('sha256', key)
    .update(JSON.stringify(TOKEN_FIELDS.map((field) => token[field])))
    .digest();

/** The current user, where files have owners and modes (not on Windows). */
const uid: number | undefined = process.getuid?.();

/** `O_NOFOLLOW` and `O_NONBLOCK` where the platform has them: a link fails the open, a pipe's open returns. */
const { O_NOFOLLOW = 0, O_NONBLOCK = 0 } = constants;

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException | null)?.code;

/** Options of {@link FileTokenStore}. */
export interface FileTokenStoreOptions {
  /**
   * The api secret the pairs are kept for: `get` finds only a pair kept with it, and `delete` removes
   * only such a pair. Without one (`oa logout`), `get` finds nothing.
   */
  apiSecret?: string | undefined;
  /** @default tokenCacheDir() */
  dir?: string | undefined;
  /**
   * Told, once per path and reason, of a file or folder left unused because it is not safe (a link, a
   * pipe, another user's, too large). @default no warning
   */
  warn?: ((line: string) => void) | undefined;
}

/** The name of a pair's file: 32 hex digits of a hash, `.json` (see `FileTokenStore.fileOf`). */
const PAIR_FILE = /^[0-9a-f]{32}\.json$/;

/**
 * A {@link TokenStore} in files: the pair of `apiKey` at `baseUrl` in a file named by a hash of both.
 * The client names its pair by its OA's key (`<apiKey>@<baseUrl>`), which the methods below call
 * `apiKey`: whatever the key, the file and the secret's binding are this store's base URL's too.
 * A file it cannot read or write is a pair it does not have: the command then logs in, as without a
 * cache, rather than failing.
 */
export class FileTokenStore implements TokenStore {
  readonly #dir: string;
  readonly #baseUrl: string;
  readonly #apiSecret: string | undefined;
  readonly #warn: (line: string) => void;
  readonly #warned = new Set<string>();
  /** The key scrypt derived for each api key, with its salt: paid for once per process. */
  readonly #keys = new Map<string, { salt: Buffer; key: Buffer }>();

  constructor(baseUrl: string, options: FileTokenStoreOptions = {}) {
    this.#dir = options.dir ?? tokenCacheDir();
    this.#baseUrl = baseUrl.replace(/\/+$/, '');
    this.#apiSecret = options.apiSecret;
    this.#warn = options.warn ?? (() => {});
  }

  /** The file of `apiKey`'s pair (see {@link PAIR_FILE}): neither the key nor the base URL appear in it. */
  fileOf(apiKey: string): string {
    const id = createHash('sha256').update(`${this.#baseUrl}\n${apiKey}`).digest('hex').slice(0, 32);
    return join(this.#dir, `${id}.json`);
  }

  async get(apiKey: string): Promise<StoredToken | undefined> {
    if (this.#apiSecret === undefined || !this.#safeDir(false)) return undefined;
    const entry = this.#readEntry(this.fileOf(apiKey));
    return entry && (await this.#verified(apiKey, entry));
  }

  async set(apiKey: string, token: StoredToken): Promise<void> {
    if (this.#apiSecret === undefined || !this.#safeDir(true)) return;
    const pair = pairOf(token);
    const { salt, key } = await this.#keyOf(apiKey);
    const binding: Binding = {
      kdf: KDF_NAME,
      salt: salt.toString('base64'),
      mac: macOf(key, pair).toString('base64'),
    };
    const file = this.fileOf(apiKey);
    // Written whole then renamed: two commands at once never leave half a file; the rename replaces
    // whatever was at the name (a link or a pipe is replaced, never followed); and the new file is
    // created here (O_EXCL, no link followed), 0600, whatever an older one had.
    const partial = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    let created = false;
    try {
      const fd = openSync(
        partial,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | O_NOFOLLOW,
        0o600,
      );
      created = true;
      try {
        writeFileSync(fd, JSON.stringify({ ...pair, binding }));
      } finally {
        closeSync(fd);
      }
      renameSync(partial, file);
    } catch {
      if (created) rmSync(partial, { force: true });
    }
  }

  /** Forgets `apiKey`'s pair if it was kept with this store's secret: a wrong secret logs nobody out. */
  async delete(apiKey: string): Promise<void> {
    if (this.#apiSecret === undefined || !this.#safeDir(false)) return;
    const file = this.fileOf(apiKey);
    const entry = this.#readEntry(file);
    if (entry && (await this.#verified(apiKey, entry))) rmSync(file, { force: true });
  }

  /** Removes the file of `apiKey`'s pair, whatever secret it was kept with (`oa logout`); `true` if there was one. */
  forget(apiKey: string): boolean {
    if (!this.#safeDir(false)) return false;
    const file = this.fileOf(apiKey);
    try {
      rmSync(file);
      return true;
    } catch {
      return false;
    }
  }

  /** Removes every cached pair; returns how many there were. */
  clear(): number {
    if (!this.#safeDir(false)) return 0;
    let names: string[];
    try {
      // Only the files this store names: nothing else someone put in the folder.
      names = readdirSync(this.#dir).filter((name) => PAIR_FILE.test(name));
    } catch {
      return 0;
    }
    for (const name of names) rmSync(join(this.#dir, name), { force: true });
    return names.length;
  }

  #warnOnce(line: string): void {
    if (this.#warned.has(line)) return;
    this.#warned.add(line);
    this.#warn(line);
  }

  /**
   * Whether the folder may be read and written: ours, and writable by nobody else (else a file in it
   * could be planted, or swapped between our check and our open). A folder of ours with a looser
   * mode is tightened to 0700. `create`: make it first (0700) if it is missing.
   */
  #safeDir(create: boolean): boolean {
    try {
      if (create) mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
      // Not followed: a link would make the checks (and the chmod) apply to wherever it points.
      const stats = lstatSync(this.#dir);
      if (stats.isSymbolicLink()) return this.#refuseDir('it is a symbolic link');
      if (!stats.isDirectory()) return this.#refuseDir('it is not a folder');
      if (uid === undefined) return true;
      if (stats.uid !== uid) return this.#refuseDir('it is owned by another user');
      if ((stats.mode & 0o077) !== 0) {
        try {
          chmodSync(this.#dir, 0o700);
        } catch {
          // Readable by others only: the files are 0600 all the same.
          if ((stats.mode & 0o022) !== 0)
            return this.#refuseDir('others can write to it, and its mode cannot be set to 0700');
        }
      }
      return true;
    } catch {
      // No folder (nothing kept yet) or one we cannot make: no pair, as without a cache.
      return false;
    }
  }

  #refuseDir(reason: string): false {
    this.#warnOnce(`oa: not using the token folder ${this.#dir}: ${reason}; logging in without it`);
    return false;
  }

  #refuseFile(file: string, reason: string): undefined {
    this.#warnOnce(`oa: not reading the kept token pair ${file}: ${reason}`);
    return undefined;
  }

  /**
   * The entry in `file`, if it is a regular file of ours of at most {@link MAX_FILE_BYTES}, opened
   * without following a link and without waiting for a pipe's writer. Only such a file is read, so
   * the read is bounded in size and time. A file of ours with a looser mode than 0600 is tightened.
   */
  #readEntry(file: string): (StoredToken & { binding?: unknown }) | undefined {
    let fd: number;
    try {
      fd = openSync(file, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (error) {
      const code = errorCode(error);
      // ELOOP on Linux and macOS, EMLINK on FreeBSD: O_NOFOLLOW met a link.
      if (code === 'ELOOP' || code === 'EMLINK') return this.#refuseFile(file, 'it is a symbolic link');
      // A socket cannot be opened.
      if (code === 'ENXIO') return this.#refuseFile(file, 'it is not a regular file');
      return undefined;
    }
    try {
      const stats = fstatSync(fd);
      if (!stats.isFile())
        return this.#refuseFile(file, 'it is not a regular file (a pipe, socket or device)');
      if (uid !== undefined) {
        if (stats.uid !== uid) return this.#refuseFile(file, 'it is owned by another user');
        // A hard link to another file of ours: tightening its mode would change that file.
        if (stats.nlink > 1) return this.#refuseFile(file, 'it has other hard links');
        if ((stats.mode & 0o077) !== 0) fchmodSync(fd, 0o600);
      }
      if (stats.size > MAX_FILE_BYTES) return this.#refuseFile(file, 'it is larger than 1 MiB');
      // One byte more than the limit: a file that grew since fstat is refused, not read on.
      const buffer = Buffer.alloc(Math.min(stats.size, MAX_FILE_BYTES) + 1);
      let length = 0;
      for (let read = -1; read !== 0 && length < buffer.length; length += read) {
        read = readSync(fd, buffer, length, buffer.length - length, null);
      }
      if (length > MAX_FILE_BYTES) return this.#refuseFile(file, 'it is larger than 1 MiB');
      const parsed: unknown = JSON.parse(buffer.subarray(0, length).toString('utf8'));
      return isStoredToken(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  /** The pair of `entry` if its MAC is right for this base URL, api key and secret; else a miss. */
  async #verified(
    apiKey: string,
    entry: StoredToken & { binding?: unknown },
  ): Promise<StoredToken | undefined> {
    // An entry of an older `oa` has no binding: a miss, and the next login replaces it.
    if (!isBinding(entry.binding)) return undefined;
    const salt = Buffer.from(entry.binding.salt, 'base64');
    const mac = Buffer.from(entry.binding.mac, 'base64');
    const pair = pairOf(entry);
    const known = this.#keys.get(apiKey);
    const derived = known?.salt.equals(salt) ? known : { salt, key: await this.#deriveKey(apiKey, salt) };
    const expected = macOf(derived.key, pair);
    if (mac.length !== expected.length || !timingSafeEqual(mac, expected)) return undefined;
    // Kept only once it verified: a planted entry's salt is never reused for ours.
    this.#keys.set(apiKey, derived);
    return pair;
  }

  /** The key of the entry `set` writes: the one of the entry read, else one of a new random salt. */
  async #keyOf(apiKey: string): Promise<{ salt: Buffer; key: Buffer }> {
    const known = this.#keys.get(apiKey);
    if (known) return known;
    const salt = randomBytes(16);
    const derived = { salt, key: await this.#deriveKey(apiKey, salt) };
    this.#keys.set(apiKey, derived);
    return derived;
  }

  /** The base URL and api key are in the password: an entry moved to another file does not verify. */
  #deriveKey(apiKey: string, salt: Buffer): Promise<Buffer> {
    const password = JSON.stringify([this.#baseUrl, apiKey, this.#apiSecret]);
    return new Promise<Buffer>((resolve, reject) =>
      scrypt(password, salt, 32, SCRYPT, (error, key) => (error ? reject(error) : resolve(key))),
    );
  }
}
