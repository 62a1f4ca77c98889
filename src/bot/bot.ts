/** `createBot`: a router over inbound events, with replies bound to the sender and per-user sessions. */
import type { OAClient } from '../client.js';
import { containLogger, type Logger, silentLogger } from '../core/logger.js';
import { OAConfigError, OALockLostError } from '../errors.js';
import type { InboxTurn } from '../queue/inbox-order.js';
import {
  aFunction,
  aLogger,
  checkConfig,
  checked,
  isObject,
  optionsOf,
  positive,
} from '../schemas/option-checks.js';
import { isMessageEvent, type WebhookEvent } from '../webhook/schemas.js';
import { BotContext, type BotOutbox, watchContext } from './context.js';
import {
  type BotFilter,
  type BotFilterContext,
  elementsOf,
  isBotFilter,
  matches,
  mediaOf,
} from './filters.js';
import { type BotSessionStore, MemorySessionStore, sessionText } from './session.js';

/** Runs before or around the handlers; `next()` runs the rest of the chain. Koa's order. */
export type BotMiddleware<S> = (ctx: BotContext<S>, next: () => Promise<void>) => unknown;

/** A handler of `bot.on(filter)`; it may call `next()` to let later handlers see the event too. */
export type BotFilterHandler<F extends BotFilter, S> = (
  ctx: BotFilterContext<F, S>,
  next: () => Promise<void>,
) => unknown;

/**
 * A handler of `bot.hears`: a text message whose text matched, `ctx.match` holding what matched (the
 * `RegExp`'s match array, or the string heard).
 */
export type BotHearsHandler<S, M extends RegExpMatchArray | string = RegExpMatchArray | string> = (
  ctx: BotFilterContext<'text', S> & { match: M },
  next: () => Promise<void>,
) => unknown;

/**
 * What a bot needs of many accounts: the `OAAccounts` of `createAccounts` (`oa-messaging`) is one.
 */
export interface BotAccounts {
  /** The client of the account that received `event`. */
  forEvent(event: WebhookEvent): OAClient;
  /** The account id of `event`, `undefined` when it names none. */
  accountOf(event: WebhookEvent): string | undefined;
}

/** Options of {@link createBot}: `client` (one account) or `accounts` (many), exactly one of them. */
export interface BotOptions<S> {
  /**
   * The client that sends the replies (and uploads their files), for a bot of one account.
   * @default undefined (then `accounts` is required)
   */
  client?: OAClient | undefined;
  /**
   * Many accounts (`createAccounts` of `oa-messaging`), instead of `client`: each event is answered
   * through the account that received it (`accounts.forEvent(event)`, `ctx.client`), and sessions and
   * the order of a user's events are that account's (the same user id in two accounts is two users).
   * An event that names no account fails with `OAConfigError`. With `outbox`, each reply is added under
   * the account that received the event (`accounts.accountOf(event)`), for a worker given the same
   * accounts (`outbox.work({ accounts })`): it is sent by that account, in that account's turns.
   * @default undefined (then `client` is required)
   */
  accounts?: BotAccounts | undefined;
  /**
   * An outbox (`createOutbox` of `oa-messaging/queue`): every reply is added to it under the key of the
   * event (its MsgKey and a hash of its whole dedupe identity: account, callback, sender, recipient,
   * group) and the reply's position (`reply:<MsgKey>.<hash>:<n>`), so a handler that runs again after a
   * failure or a crash never sends a reply twice, and two events the dedupe tells apart never share one.
   * With `accounts`, each reply is added with `account` (the receiving account) and `orderGroup` (the
   * user): a user's replies are sent one at a time, in the order added, across retries, a rotated
   * secret and a worker that died. With `client`, replies are added without an account (for a worker
   * given that client); their order is kept only by a worker with `concurrency: 1`.
   * Without an outbox, replies are sent by the client at once.
   * @default undefined
   */
  outbox?: BotOutbox | undefined;
  /**
   * Where `ctx.session` is kept, per user: `createRedisSessionStore` (`oa-messaging/redis`) to share
   * it between processes, `false` for no sessions.
   * @default new MemorySessionStore()
   */
  sessions?: BotSessionStore | false | undefined;
  /** The session of a user who has none yet. @default () => ({}) */
  initialSession?: (() => S) | undefined;
  /**
   * How long a session is kept after it was last saved.
   * @default 604_800_000 (7 days)
   */
  sessionTtlMs?: number | undefined;
  /** The largest session, in bytes of JSON; a larger one fails the event. @default 65_536 */
  maxSessionBytes?: number | undefined;
  /**
   * Where a refused session write is reported (`warn`): a worker of an inbox with `order: 'sender'`
   * that lost its sender to another worker. A logger that throws is ignored.
   * @default undefined (silent)
   */
  logger?: Logger | undefined;
}

/** A bot: see {@link createBot}. */
export interface Bot<S = Record<string, unknown>> {
  /** Adds middleware that runs for every event, in the order added, before the handlers added after it. */
  use(...middleware: BotMiddleware<S>[]): this;
  /**
   * Handles messages that match `filter` (or any of several): `text`, `image`, `video`, `sound`, `file`,
   * `location`, `face`, `custom`, or `message` for any message. The handler's `ctx` is typed by the
   * filter: an `image` handler's `ctx.media` holds the images, at least one.
   */
  on<F extends BotFilter>(filter: F | readonly F[], ...handlers: BotFilterHandler<F, S>[]): this;
  /**
   * Handles text messages whose whole text (trimmed) equals a string, or matches a `RegExp`; `ctx.match`
   * holds the match.
   */
  hears<T extends string | RegExp>(
    trigger: T | readonly T[],
    ...handlers: BotHearsHandler<S, T extends RegExp ? RegExpMatchArray : string>[]
  ): this;
  /**
   * Runs for an event no handler took (the chain ran to its end): other messages, events of unknown
   * types. Without one such events are left alone; they are never an error.
   */
  fallback(handler: (ctx: BotContext<S>) => unknown): this;
  /**
   * Handles an error thrown by middleware, a handler, or the session's save: the event then counts as
   * handled. Without it (or when it throws) `handle` rejects, so the webhook answers 500 and the OA
   * delivers again, or the inbox runs the event again.
   */
  catch(handler: (error: unknown, ctx: BotContext<S>) => unknown): this;
  /**
   * Handles one event: pass it as `onEvent` of either webhook handler, or to `inbox.work`. Works unbound.
   * Events of one sender are handled one at a time, in the order they reached this process; across
   * processes, an inbox with `order: 'sender'` keeps that order, and its turn (the second argument)
   * fences the handler: a worker that lost the sender (it stalled past `lockDurationMs`) has its next
   * reply rejected and its session's save refused, with `OALockLostError` (never given to `catch`).
   */
  readonly handle: (event: WebhookEvent, context?: unknown) => Promise<void>;
}

const DAY_MS = 86_400_000;

const NEEDS_CLIENT =
  'createBot needs { client } (the OAClient that sends the replies) or { accounts } (createAccounts), one of them';

/** What {@link BotOptions} takes, checked once by `createBot`. */
const BotOptionsSchema = optionsOf(
  {
    client: checked(isObject, 'must be an OAClient'),
    accounts: checked(
      (v) => isObject(v) && typeof v.forEvent === 'function' && typeof v.accountOf === 'function',
      'must be the accounts of createAccounts',
    ),
    outbox: checked(
      (v) => isObject(v) && typeof v.add === 'function',
      'must be an outbox of createOutbox (oa-messaging/queue)',
    ),
    sessions: checked(
      (v) => v === false || (isObject(v) && typeof v.get === 'function' && typeof v.set === 'function'),
      'must be a session store (get, set, delete) or false',
    ),
    initialSession: aFunction,
    sessionTtlMs: positive(),
    maxSessionBytes: positive(),
    logger: aLogger,
  },
  NEEDS_CLIENT,
);

/** Stands for a field the context does not have of its own, in {@link narrowed}. */
const ABSENT = Symbol('absent');

/**
 * Runs `inner` with `overrides` (a route's `elements`, `media`, `match`) in place of the context's own
 * fields. `inner` gets a `leave` to wrap what runs beyond the route (the rest of the bot's stack): the
 * context's own fields are back meanwhile. What a handler writes to an override stays the route's, as
 * what the rest writes stays the context's.
 */
async function narrowed(
  ctx: object,
  overrides: Record<string, unknown>,
  inner: (leave: (next: () => Promise<void>) => Promise<void>) => Promise<void>,
): Promise<void> {
  const fields = ctx as Record<string, unknown>;
  const keys = Object.keys(overrides);
  // Exchanges the context's fields and the kept ones: in, then out, then in again ...
  const swap = () => {
    for (const key of keys) {
      const own = Object.hasOwn(fields, key) ? fields[key] : ABSENT;
      const kept = overrides[key];
      if (kept === ABSENT) delete fields[key];
      else fields[key] = kept;
      overrides[key] = own;
    }
  };
  swap();
  try {
    await inner(async (next) => {
      swap();
      try {
        await next();
      } finally {
        swap();
      }
    });
  } finally {
    swap();
  }
}

function heard(trigger: string | RegExp, text: string): RegExpMatchArray | string | undefined {
  if (typeof trigger === 'string') return text.trim() === trigger ? trigger : undefined;
  trigger.lastIndex = 0;
  return text.match(trigger) ?? undefined;
}

/**
 * A bot over the events the OA webhook delivers: a router (`on`, `hears`, `use`, `fallback`, `catch`),
 * a context bound to the sender (`ctx.reply(...)` needs no `user_id`), and a per-user `ctx.session`.
 *
 * @example
 * ```ts
 * const bot = createBot({ client });
 * bot.on('text', (ctx) => ctx.reply(`You said ${ctx.text}`));
 * bot.on('image', (ctx) => ctx.replyWithImage(thanksImageUrl)); // yours, not the user's signed URL
 * createWebhookHandler({ onEvent: bot.handle });
 * ```
 */
export function createBot<S = Record<string, unknown>>(options: BotOptions<S>): Bot<S> {
  checkConfig(BotOptionsSchema, options, 'createBot');
  const { client, accounts, outbox } = options;
  if ((client === undefined) === (accounts === undefined)) throw new OAConfigError(NEEDS_CLIENT);
  /** The account of an event in the keys of its sessions and order: its username, or its account id. */
  const accountKey = (event: WebhookEvent): string => {
    if (!accounts) return event.username ?? '';
    const account = accounts.accountOf(event);
    if (account === undefined)
      throw new OAConfigError('bot.handle: the event names no account (accountOf gave none)');
    return account;
  };
  const store = options.sessions === false ? undefined : (options.sessions ?? new MemorySessionStore());
  const initial = options.initialSession ?? (() => ({}) as S);
  const ttlMs = options.sessionTtlMs ?? 7 * DAY_MS;
  const maxBytes = options.maxSessionBytes ?? 65_536;
  const logger = options.logger ? containLogger(options.logger) : silentLogger;

  const stack: BotMiddleware<S>[] = [];
  let fallback: ((ctx: BotContext<S>) => unknown) | undefined;
  let onError: ((error: unknown, ctx: BotContext<S>) => unknown) | undefined;
  const needFunctions = (what: string, handlers: unknown[]) => {
    if (handlers.length === 0 || handlers.some((h) => typeof h !== 'function')) {
      throw new OAConfigError(`bot.${what} needs one or more handler functions`);
    }
  };

  /**
   * The one runner: `chain` from `index` on `ctx`, then `end` when it runs off its end. The bot's stack
   * ends in the fallback; a route's handlers end in the stack's `next`.
   */
  const run = async (
    chain: readonly BotMiddleware<S>[],
    index: number,
    ctx: BotContext<S>,
    end: () => unknown,
  ): Promise<void> => {
    const middleware = chain[index];
    if (!middleware) {
      await end();
      return;
    }
    let called = false;
    await middleware(ctx, () => {
      if (called) return Promise.reject(new Error('next() called twice by one middleware'));
      called = true;
      return run(chain, index + 1, ctx, end);
    });
  };

  /**
   * The one primitive of `on` and `hears` (grammY's `filter`): a middleware that runs `handlers` on
   * events `select` gives overrides for, narrowed to them, and passes the others on.
   */
  const route =
    (
      select: (ctx: BotContext<S>) => Record<string, unknown> | undefined,
      handlers: readonly unknown[],
    ): BotMiddleware<S> =>
    (ctx, next) => {
      const overrides = select(ctx);
      if (overrides === undefined) return next();
      const chain = handlers as BotMiddleware<S>[];
      return narrowed(ctx, overrides, (leave) => run(chain, 0, ctx, () => leave(next)));
    };

  /**
   * Saves the session of `ctx` if a handler touched it and it changed. Under an inbox turn, only while
   * this worker holds the sender, and with its fence: a newer holder's session is never written over.
   */
  const save = async (
    ctx: BotContext<S>,
    key: string,
    stored: string | undefined,
    before: string | undefined,
    turn: InboxTurn | undefined,
  ) => {
    if (!store) return;
    const current = ctx.session as unknown;
    const text = current === undefined || current === null ? undefined : sessionText(current, maxBytes);
    if (text === undefined ? stored === undefined : text === before) return;
    const refused = async (error: unknown) => {
      logger.warn?.(
        'oa-messaging bot: a session write was refused: this worker lost the sender to another worker (it stalled past the inbox lockDurationMs); the newer session is kept',
        { key, fence: turn?.fence, error: error instanceof Error ? error.message : String(error) },
      );
      throw error instanceof OALockLostError
        ? error
        : new OALockLostError(
            'the session was written by a newer holder of the sender: this write was refused',
          );
    };
    await turn?.assertHeld().catch(refused);
    const fence = turn === undefined ? {} : { fence: turn.fence };
    const written =
      text === undefined ? await store.delete(key, fence) : await store.set(key, text, ttlMs, fence);
    if (written === false) await refused(undefined);
  };

  const handleOne = async (
    event: WebhookEvent,
    from: string | undefined,
    turn: InboxTurn | undefined,
  ): Promise<void> => {
    const key = store && from !== undefined ? `${accountKey(event)}:${from}` : undefined;
    const replier = accounts ? accounts.forEvent(event) : (client as OAClient);
    const stored = key === undefined ? undefined : await store?.get(key);
    const session = stored === undefined ? initial() : (JSON.parse(stored) as S);
    // With accounts and an outbox, each reply goes through the receiving account's lane of the outbox.
    const account = accounts && outbox ? accountKey(event) : undefined;
    const ctx = new BotContext<S>(event, replier, outbox, session, account);
    // What the session was before any handler touched it: the stored text, or a new user's initial
    // session as JSON (taken at the first touch, before a handler can change it in place).
    let before = stored;
    const touched = watchContext(ctx, {
      onFirstTouch: (loaded) => {
        if (stored !== undefined) return;
        try {
          before = JSON.stringify(loaded);
        } catch {
          // Not JSON (a BigInt): the save says so, with the path, through sessionText.
        }
      },
      beforeSend: turn && (() => turn.assertHeld()),
    });
    try {
      await run(stack, 0, ctx, () => fallback?.(ctx));
      // Saved only when a handler read or assigned it and it changed, and only after every handler
      // succeeded: a retried event starts from the session as it was, and a user whose handlers never
      // touch the session (or leave it as it was) costs no write.
      if (key !== undefined && touched()) await save(ctx, key, stored, before, turn);
    } catch (error) {
      // A lost sender is the inbox's to know (it leaves the event to the new holder), not a handler's error.
      if (!onError || error instanceof OALockLostError) throw error;
      await onError(error, ctx);
    }
  };

  /** The inbox turn `bot.handle` was given, when it runs from an inbox with `order: 'sender'`. */
  const turnOf = (context: unknown): InboxTurn | undefined => {
    const turn = context as Partial<InboxTurn> | null | undefined;
    return typeof turn?.fence === 'number' && typeof turn.assertHeld === 'function'
      ? (turn as InboxTurn)
      : undefined;
  };

  // One event at a time per sender, in arrival order, in this process.
  const running = new Map<string, Promise<void>>();
  const handle = (event: WebhookEvent, context?: unknown): Promise<void> => {
    if (typeof event !== 'object' || event === null) {
      return Promise.reject(new OAConfigError('bot.handle needs an event'));
    }
    const turn = turnOf(context);
    const data = (event as { data?: { From_Account?: unknown } }).data;
    const from = typeof data?.From_Account === 'string' ? data.From_Account : undefined;
    if (!from) return handleOne(event, undefined, turn);
    let sender: string;
    try {
      // One user of one account: the same user id in another account is another user.
      sender = `${accountKey(event)}:${from}`;
    } catch (error) {
      return Promise.reject(error);
    }
    const previous = running.get(sender) ?? Promise.resolve();
    const current = previous.then(
      () => handleOne(event, from, turn),
      () => handleOne(event, from, turn),
    );
    const settled = current.then(
      () => {},
      () => {},
    );
    running.set(sender, settled);
    void settled.then(() => {
      if (running.get(sender) === settled) running.delete(sender);
    });
    return current;
  };

  const bot: Bot<S> = {
    use(...middleware) {
      needFunctions('use', middleware);
      stack.push(...middleware);
      return bot;
    },
    on(filter, ...handlers) {
      const filters: readonly BotFilter[] = Array.isArray(filter) ? filter : [filter as BotFilter];
      const unknown = filters.find((f) => !isBotFilter(f));
      if (filters.length === 0 || unknown !== undefined) {
        throw new OAConfigError(
          `bot.on: unknown filter ${JSON.stringify(unknown)}: use message, text, image, video, sound, file, location, face or custom`,
        );
      }
      needFunctions('on', handlers);
      stack.push(
        route((ctx) => {
          const matched = filters.find((f) => matches(f, ctx.event));
          if (matched === undefined || !isMessageEvent(ctx.event)) return undefined;
          return { elements: elementsOf(matched, ctx.event), media: mediaOf(matched, ctx.media) };
        }, handlers),
      );
      return bot;
    },
    hears(trigger, ...handlers) {
      const triggers: readonly (string | RegExp)[] = Array.isArray(trigger)
        ? trigger
        : [trigger as string | RegExp];
      if (triggers.length === 0 || triggers.some((t) => typeof t !== 'string' && !(t instanceof RegExp))) {
        throw new OAConfigError('bot.hears needs a string, a RegExp, or a list of them');
      }
      needFunctions('hears', handlers);
      stack.push(
        route((ctx) => {
          if (!matches('text', ctx.event)) return undefined;
          for (const t of triggers) {
            const match = heard(t, ctx.text);
            if (match !== undefined)
              return { elements: elementsOf('text', ctx.event), media: ctx.media, match };
          }
          return undefined;
        }, handlers),
      );
      return bot;
    },
    fallback(handler) {
      needFunctions('fallback', [handler]);
      fallback = handler;
      return bot;
    },
    catch(handler) {
      needFunctions('catch', [handler]);
      onError = handler;
      return bot;
    },
    handle,
  };
  return bot;
}
