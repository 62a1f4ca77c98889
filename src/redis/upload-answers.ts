/** The answers of uploads, shared in Redis by every process of an api key, for reuse of the same bytes. */
import type { UploadAnswers } from '../uploads/upload-reuse.js';
import type { RedisConnection } from './connection.js';
import { GET_VALUE, SET_VALUE } from './scripts.js';

/**
 * An {@link UploadAnswers} in Redis: one JSON answer per key, `${prefix}upload:${key}` (the key names
 * the api key, the endpoint and the SHA-256 of the bytes), expiring after the client's `ttlMs`.
 */
export class RedisUploadAnswers implements UploadAnswers {
  readonly #connection: RedisConnection;
  readonly #prefix: string;

  constructor(connection: RedisConnection, prefix: string) {
    this.#connection = connection;
    this.#prefix = prefix;
  }

  async get(key: string): Promise<unknown> {
    const text = await this.#connection.run(GET_VALUE, [`${this.#prefix}upload:${key}`], []);
    if (typeof text !== 'string') return undefined;
    try {
      // Checked by the client against the endpoint's answer before it is used.
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  }

  async set(key: string, answer: object, ttlMs: number): Promise<void> {
    const json = JSON.stringify(answer);
    await this.#connection.run(
      SET_VALUE,
      [`${this.#prefix}upload:${key}`],
      [json, Math.max(1, Math.ceil(ttlMs))],
    );
  }
}
