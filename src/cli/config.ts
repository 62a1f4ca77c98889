/**
 * Where the connection settings come from, first found wins: a flag, then the environment, then a
 * `.env` file (the one `--dotenv` names, else `./.env` when there is one). The file never overrides
 * a variable that is already set, and it is parsed, not loaded: `oa` leaves its own environment as it
 * found it.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { UsageError } from './errors.js';

/** The settings `oa` needs to call the API. */
export interface ConnectionSettings {
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
}

/** The connection flags as parsed. */
export interface ConnectionFlags {
  baseUrl?: string;
  apiKey?: string;
  apiSecret?: string;
  dotenv?: string;
}

/** Each setting: its flag and its variable. */
const SETTINGS = [
  { key: 'baseUrl', flag: '--base-url', variable: 'OA_BASE_URL' },
  { key: 'apiKey', flag: '--api-key', variable: 'OA_API_KEY' },
  { key: 'apiSecret', flag: '--api-secret', variable: 'OA_API_SECRET' },
] as const;

/** The variables of a `.env` file, or none when the default file is absent. */
function readEnvFile(path: string | undefined, cwd: string): Record<string, string | undefined> {
  const file = resolve(cwd, path ?? '.env');
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // Only a file the user named must exist; the default one is optional.
    if (path === undefined && code === 'ENOENT') return {};
    throw new UsageError(`cannot read the env file ${path ?? '.env'} (${code ?? 'unreadable'})`);
  }
  return parseEnv(text);
}

/** One variable from the environment, else the env file; `undefined` when neither has it. */
export function readEnvVariable(
  variable: string,
  dotenv: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): string | undefined {
  return [env[variable], readEnvFile(dotenv, cwd)[variable]].find((v) => v !== undefined && v !== '');
}

/** The settings of `wanted` from the flags, the environment and the env file, in that order. */
function resolveSettings<K extends keyof ConnectionSettings>(
  wanted: readonly K[],
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Pick<ConnectionSettings, K> {
  const fromFile = readEnvFile(flags.dotenv, cwd);
  const found: Partial<Record<keyof ConnectionSettings, string>> = {};
  const missing: string[] = [];
  for (const { key, flag, variable } of SETTINGS) {
    if (!(wanted as readonly string[]).includes(key)) continue;
    // An empty value counts as unset, as the SDK treats it.
    const value = [flags[key], env[variable], fromFile[variable]].find((v) => v !== undefined && v !== '');
    if (value === undefined) missing.push(`${flag} (or ${variable})`);
    else found[key] = value;
  }
  if (missing.length > 0) {
    throw new UsageError(`missing ${missing.join(', ')}: pass the flag, set the variable or put it in .env`);
  }
  return found as Pick<ConnectionSettings, K>;
}

/**
 * The settings from the flags, the environment and the env file, in that order. A missing one is a
 * usage error that says every way to give it.
 */
export function resolveConnection(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): ConnectionSettings {
  return resolveSettings(['baseUrl', 'apiKey', 'apiSecret'], flags, env, cwd);
}

/** The base URL and api key alone (what names a cached token pair), found the same way. */
export function resolveAccount(
  flags: ConnectionFlags,
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
): Pick<ConnectionSettings, 'baseUrl' | 'apiKey'> {
  return resolveSettings(['baseUrl', 'apiKey'], flags, env, cwd);
}
