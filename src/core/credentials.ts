/**
 * The api key and secret a client logs in with: given once (`apiKey`, `apiSecret`), or read from the
 * caller's provider (`credentials`) when the client first needs them and again once after a refused
 * login, so that a rotated secret costs one refused login. Refused logins are spaced out (one attempt
 * per backoff), since the provider's store may learn the new secret seconds after the OA refuses the
 * old one.
 */
import { OAConfigError, OACredentialsError, type OAUnauthorizedError, reissued } from '../errors.js';
import { baseUrlProblem } from '../schemas/client-options.js';
import { MIN_SECRET_LENGTH } from '../schemas/option-values.js';

/** What a {@link CredentialsProvider} answers for an OA account. */
export interface OACredentials {
  /** The account's api key. */
  apiKey: string;
  /** The account's api secret: at least 6 characters. */
  apiSecret: string;
  /**
   * Where the account's API is, when not at the client's `baseUrl`: checked as that option is (https,
   * or plain http on loopback or with `allowInsecureHttp`).
   * @default the client's `baseUrl`
   */
  baseUrl?: string | undefined;
}

/**
 * Where a client's api key and secret come from (the `credentials` client option): your store of
 * connected accounts, a secrets manager. `undefined` or `null`: no such account (its calls reject with
 * `OAConfigError`, nothing sent).
 */
export type CredentialsProvider = () =>
  | OACredentials
  | undefined
  | null
  | Promise<OACredentials | undefined | null>;

/** How long a lookup in the caller's store may take before it counts as failed (and is asked again). */
export const CREDENTIALS_TIMEOUT_MS = 10_000;

/** The wait after a refused login before the next one, doubled at each refusal up to the most. */
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

/** A login that was refused, and when the next one may be tried. */
interface Refusal {
  error: OAUnauthorizedError;
  retryAt: number;
  backoffMs: number;
}

/** A client's credentials (see the file's comment). */
export class CredentialSource {
  readonly #provider: CredentialsProvider | undefined;
  /** How messages name the account: ` of OA account shop-42`, or nothing for a plain client. */
  readonly #whose: string;
  readonly #account: string | undefined;
  readonly #allowInsecureHttp: boolean;
  readonly #timeoutMs: number;
  #held: OACredentials | undefined;
  #asking: Promise<OACredentials> | undefined;
  #refusal: Refusal | undefined;
  /** The provider must be asked before the next login (the last one was refused). */
  #stale = false;

  constructor(
    given: OACredentials | undefined,
    provider: CredentialsProvider | undefined,
    account?: string,
    allowInsecureHttp = false,
    timeoutMs = CREDENTIALS_TIMEOUT_MS,
  ) {
    this.#held = given;
    this.#provider = provider;
    this.#account = account;
    this.#allowInsecureHttp = allowInsecureHttp;
    this.#timeoutMs = timeoutMs;
    this.#whose = account === undefined ? '' : ` of OA account ${account}`;
  }

  /** The client's `account`, if any. */
  get account(): string | undefined {
    return this.#account;
  }

  /** The credentials last read (for scrubbing), if any. */
  get held(): OACredentials | undefined {
    return this.#held;
  }

  /**
   * The credentials to log in with: those held, else the provider's answer (one question however many
   * calls wait, bounded by `credentialsTimeoutMs`: a question that fails or runs out is asked again by
   * the next call). While refused logins are backing off, the last refusal again, at once: nothing sent.
   */
  current(now = Date.now()): OACredentials | Promise<OACredentials> {
    const refusal = this.#refusal;
    if (refusal && now < refusal.retryAt) {
      const waitMs = refusal.retryAt - now;
      throw reissued(refusal.error, {
        message: `${refusal.error.message} (login${this.#whose} refused; the next attempt in ${waitMs} ms: nothing sent)`,
      });
    }
    if (this.#held && !this.#stale) return this.#held;
    if (!this.#provider) {
      // Only a provider's credentials are ever dropped; a plain client keeps what it was given.
      return this.#held as OACredentials;
    }
    this.#asking ??= this.#ask().finally(() => {
      this.#asking = undefined;
    });
    return this.#asking;
  }

  /**
   * A login with `used` was refused (401). With a provider, asks it again once: a changed answer is
   * returned, to log in with at once. Otherwise the refused logins back off (with a provider only:
   * a plain client's behaviour is unchanged) and `undefined` is returned: the refusal is final.
   */
  async refused(
    used: OACredentials,
    error: OAUnauthorizedError,
    askAgain: boolean,
  ): Promise<OACredentials | undefined> {
    if (!this.#provider) return undefined;
    if (askAgain) {
      this.#stale = true;
      const fresh = await this.current();
      if (
        fresh.apiKey !== used.apiKey ||
        fresh.apiSecret !== used.apiSecret ||
        fresh.baseUrl !== used.baseUrl
      ) {
        return fresh;
      }
    }
    const backoffMs = Math.min(
      MAX_BACKOFF_MS,
      this.#refusal ? this.#refusal.backoffMs * 2 : FIRST_BACKOFF_MS,
    );
    this.#refusal = { error, retryAt: Date.now() + backoffMs, backoffMs };
    // The next login, after the backoff, asks the provider first: it may have learnt the new secret.
    this.#stale = true;
    return undefined;
  }

  /**
   * `error`, a refused login, in words that name the account and say what was tried: every refusal
   * of an account's login names it, the first as well as those during the backoff.
   */
  named(error: OAUnauthorizedError): OAUnauthorizedError {
    if (this.#account === undefined) return error;
    return reissued(error, {
      message: `${error.message} (login${this.#whose} refused, its credentials read again and unchanged: nothing sent)`,
    });
  }

  /** A login succeeded: refusals are forgotten. */
  accepted(): void {
    this.#refusal = undefined;
  }

  /**
   * The provider's answer, or {@link OACredentialsError} when it throws or has not answered within
   * `credentialsTimeoutMs`. An answer that comes after that is dropped: the next call asks again, so a
   * lookup that never settles cannot hold the account's calls for good.
   */
  async #answer(): Promise<OACredentials | undefined | null> {
    const provider = this.#provider as CredentialsProvider;
    const timeoutMs = this.#timeoutMs;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ranOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new OACredentialsError(
              `The credentials${this.#whose} were not read: the credentials store did not answer within ${timeoutMs} ms (credentialsTimeoutMs); nothing was sent, and the next call asks again`,
              this.#account,
            ),
          ),
        timeoutMs,
      );
      // A lookup still running must not keep a script that has ended alive.
      (timer as { unref?: () => void }).unref?.();
    });
    try {
      const asked = Promise.resolve().then(provider);
      // Dropped once the bound has run out: its late failure is nobody's.
      asked.catch(() => {});
      return await Promise.race([asked, ranOut]);
    } catch (error) {
      if (error instanceof OACredentialsError) throw error;
      throw new OACredentialsError(
        `The credentials${this.#whose} could not be read: ${error instanceof Error ? error.message : String(error)}; nothing was sent`,
        this.#account,
        { cause: error },
      );
    } finally {
      clearTimeout(timer);
    }
  }

  async #ask(): Promise<OACredentials> {
    const answer = await this.#answer();
    if (answer === undefined || answer === null) {
      const which =
        this.#account === undefined ? 'Unknown OA account' : `Unknown OA account ${this.#account}`;
      throw new OAConfigError(`${which}: the credentials provider has none for it; nothing was sent`);
    }
    const { apiKey, apiSecret, baseUrl } = answer as Partial<OACredentials>;
    if (
      typeof apiKey !== 'string' ||
      apiKey === '' ||
      typeof apiSecret !== 'string' ||
      apiSecret.length < MIN_SECRET_LENGTH
    ) {
      throw new OAConfigError(
        `The credentials${this.#whose} are unusable: they need an apiKey and an apiSecret of at least ${MIN_SECRET_LENGTH} characters; nothing was sent`,
      );
    }
    const problem =
      baseUrl === undefined ? undefined : baseUrlProblem(String(baseUrl), this.#allowInsecureHttp);
    if (problem) {
      throw new OAConfigError(`The credentials${this.#whose} are unusable: ${problem}; nothing was sent`);
    }
    const fresh: OACredentials =
      baseUrl === undefined ? { apiKey, apiSecret } : { apiKey, apiSecret, baseUrl };
    this.#held = fresh;
    this.#stale = false;
    return fresh;
  }
}
