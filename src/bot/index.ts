/**
 * `oa-messaging/bot`: answer your users. A router over the events the OA webhook delivers (`on`,
 * `hears`, `use`, `fallback`, `catch`), a context whose replies need no `user_id`, per-user sessions,
 * one event at a time per user, and with an outbox, replies that are never sent twice.
 *
 * @example
 * ```ts
 * import { createBot } from 'oa-messaging/bot';
 * const bot = createBot({ client });
 * bot.on('text', (ctx) => ctx.reply(`You said ${ctx.text}`));
 * createWebhookHandler({ onEvent: bot.handle });
 * ```
 *
 * @module oa-messaging/bot
 */
export {
  type Bot,
  type BotAccounts,
  type BotFilterHandler,
  type BotHearsHandler,
  type BotMiddleware,
  type BotOptions,
  createBot,
} from './bot.js';
export {
  BotContext,
  type BotImageReplyOptions,
  type BotOutbox,
  type BotReplyOptions,
} from './context.js';
export type { BotFilter, BotFilterContext, BotFilterView, BotFilterViews } from './filters.js';
export { type BotSessionStore, type BotSessionWriteOptions, MemorySessionStore } from './session.js';
