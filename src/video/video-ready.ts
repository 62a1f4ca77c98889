/**
 * Broadcasts wait for their videos. The API accepts a mass broadcast whose video ticket is still
 * converting and fails its job later (spec, "States and transitions"), and it has no ticket status
 * endpoint: the only signal is the single-user video send, which answers 400 while the ticket converts.
 * So a ticket is broadcast only once it is known ready (a `sendVideo` of it succeeded, here or in a
 * process sharing the coordination), or once a probe send to a user the integrator names has succeeded.
 */
import type * as z from 'zod/mini';
import { type CallControl, sleep } from '../core/call-control.js';
import type { ClientContext } from '../core/context.js';
import { callState, joinHooks, runAround } from '../core/hooks.js';
import { checkOptions, type OAClientOptions, type ReadyVideos } from '../core/options.js';
import { callChecked } from '../core/pipeline.js';
import { type Endpoint, endpoints } from '../endpoints.js';
import {
  isOAError,
  OAConnectionError,
  OATranscodeTimeoutError,
  OAVideoNotConfirmedError,
} from '../errors.js';
import { UuidSchema } from '../schemas/common.js';
import {
  type BroadcastOptions,
  BroadcastOptionsSchema,
  type SendVideoOptions,
  SendVideoOptionsSchema,
  type SendVideoParams,
  SendVideoParamsSchema,
  type WaitForVideoOptions,
  WaitForVideoOptionsSchema,
} from '../schemas/requests.js';
import type { SendResult } from '../schemas/responses.js';
import { validate } from '../schemas/validate.js';
import { MemoryReadyVideos } from './ready-videos.js';
import { DEFAULT_TRANSCODE_TIMEOUT_MS, untilTranscoded } from './transcode.js';

export type { BroadcastOptions, WaitForVideoOptions } from '../schemas/requests.js';

type Items = readonly { type: string; msg?: unknown }[];

const TRANSCODE_WAIT = 'waiting for the video transcode';

/** The tickets known ready, and the wait that confirms the others before a broadcast. */
export class VideoReadiness {
  readonly #ctx: ClientContext;
  /** The client's `videoProbeUserId`. */
  readonly #probeUserId: string | undefined;
  /** This process's memory. */
  readonly #local: ReadyVideos = new MemoryReadyVideos();
  /** The coordination's memory, shared by every process. */
  readonly #shared: ReadyVideos | undefined;
  /** Probes in flight, by ticket: a second broadcast of the same ticket waits for the first probe. */
  readonly #probes = new Map<string, Promise<unknown>>();

  constructor(ctx: ClientContext, options: Pick<OAClientOptions, 'videoProbeUserId' | 'coordination'>) {
    // Checked with the client's other options, by `OAClientOptionsSchema`.
    this.#ctx = ctx;
    this.#probeUserId = options.videoProbeUserId;
    this.#shared = options.coordination?.readyVideos;
  }

  /**
   * `sendVideo`: while the ticket is still converting, waits and tries again, each try a call of its
   * own (its own deadline); the waits end on the caller's signal and on close(). Once it succeeds the
   * ticket is known ready.
   */
  async sendVideo(params: SendVideoParams, options?: SendVideoOptions): Promise<SendResult> {
    const ctx = this.#ctx;
    const endpoint = endpoints.sendVideo;
    const checked = checkOptions(ctx, endpoint, options, SendVideoOptionsSchema);
    const { waitForTranscode, ...requestOptions } = checked;
    const valid = validate(SendVideoParamsSchema, params, 'sendVideo params');
    const control = ctx.calls.start(`POST ${endpoint.path}`, { signal: checked.signal });
    const hooks = joinHooks(ctx.hooks, checked.hooks)?.aroundCall;
    // Each try while the ticket converts is a call without the aroundCall hooks, which run once around
    // them all: one logical call (one span).
    const send = () =>
      untilTranscoded(() => callChecked(ctx, endpoint, valid, requestOptions, false), {
        ticket_id: valid.ticket_id,
        wait: waitForTranscode,
        control,
        onWait: (waitMs, attempt, error) => {
          ctx.logger.info?.(
            `oa-messaging: video ticket ${valid.ticket_id} is still converting; trying again in ${waitMs} ms`,
          );
          const { name, path } = endpoint;
          ctx.events.emit('retry', {
            endpoint: name,
            path,
            attempt,
            reason: 'video_converting',
            waitMs,
            error,
          });
        },
      });
    try {
      const result = await (hooks
        ? runAround(hooks, callState(endpoint, valid, false), ctx.logger, send)
        : send());
      await this.markReady(valid.ticket_id);
      return result;
    } finally {
      control.end();
    }
  }

  /**
   * Records a ticket that was delivered. The send already succeeded: a shared memory that cannot be
   * reached costs a probe later, never a failed send.
   */
  async markReady(ticket_id: string): Promise<void> {
    const key = this.#ctx.stateKey;
    await this.#local.markReady(key, ticket_id);
    try {
      await this.#shared?.markReady(key, ticket_id);
    } catch (error) {
      this.#ctx.logger.warn?.(`oa-messaging: could not share that video ticket ${ticket_id} is ready`, {
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /**
   * Whether a ticket is known ready, here or in the shared memory: for the OA the client speaks to, which
   * its credentials say (read first, within `control`'s deadline, signal and close, when one is given).
   */
  async isReady(ticket_id: string, control?: CallControl): Promise<boolean> {
    const { prepare } = this.#ctx;
    if (prepare) await (control ? control.wait(prepare(), "reading the account's credentials") : prepare());
    const key = this.#ctx.stateKey;
    const local = this.#local;
    if (await local.isReady(key, ticket_id)) return true;
    if (!this.#shared || !(await this.#shared.isReady(key, ticket_id))) return false;
    await local.markReady(key, ticket_id);
    return true;
  }

  /**
   * A broadcast: checks `params` and `options`, waits until every video ticket of its items is known
   * ready (probing those that are not), then runs `send`. Nothing is sent when a check fails.
   */
  async broadcast<R extends z.ZodMiniType>(
    endpoint: Endpoint<z.ZodMiniType, R>,
    params: unknown,
    given: BroadcastOptions | undefined,
  ): Promise<z.output<R>> {
    // Checked before anything else: a wrong option (null, a signal that is not one) is a typed error.
    if (given !== undefined) validate(BroadcastOptionsSchema, given, `${endpoint.name} options`);
    const options: BroadcastOptions = given ?? {};
    const { videoProbeUserId, waitForTranscode, ...requestOptions } = options;
    const valid = validate(endpoint.params, params, `${endpoint.name} params`) as { items: Items };
    if (waitForTranscode !== false) {
      const tickets = valid.items.flatMap((item) => (item.type === 'video' ? [String(item.msg)] : []));
      await this.#confirmAll([...new Set(tickets)], {
        probeUserId: videoProbeUserId,
        timeoutMs: waitForTranscode?.timeoutMs,
        signal: options.signal,
        requestTimeoutMs: options.timeoutMs,
        how: 'pass { videoProbeUserId } to the broadcast (or set it on the client)',
        what: endpoint.name,
      }).catch((error: unknown) => {
        // `deliveryUnknown` on a probe's failure is about the probe user's copy; the caller would read
        // it as "the broadcast may have gone out", and it did not.
        if (!isOAError(error) || !error.deliveryUnknown) throw error;
        throw new OAConnectionError(
          `Not sent: the probe send of a video failed before the broadcast (${error.message})`,
          { cause: error, failure: 'final' },
        );
      });
    }
    return callChecked(this.#ctx, endpoint, valid, requestOptions);
  }

  /** `waitForVideo`: the wait alone. */
  async waitFor(ticket_id: string, options: WaitForVideoOptions = {}): Promise<void> {
    const ticket = validate(UuidSchema, ticket_id, 'waitForVideo ticket_id');
    validate(WaitForVideoOptionsSchema, options, 'waitForVideo options');
    await this.#confirmAll([ticket], {
      ...options,
      requestTimeoutMs: undefined,
      how: 'pass { probeUserId } (or set videoProbeUserId on the client)',
      what: 'waitForVideo',
    });
  }

  async #confirmAll(
    tickets: string[],
    opts: WaitForVideoOptions & { requestTimeoutMs: number | undefined; how: string; what: string },
  ): Promise<void> {
    if (tickets.length === 0) return;
    const control = this.#ctx.calls.start(opts.what, { signal: opts.signal });
    try {
      await this.#confirmEach(tickets, opts, control);
    } catch (error) {
      // Ended by close() or the caller's signal: say so, whatever the wait was doing then.
      if (control.stopped) throw control.error(TRANSCODE_WAIT);
      throw error;
    } finally {
      control.end();
    }
  }

  async #confirmEach(
    tickets: string[],
    opts: WaitForVideoOptions & { requestTimeoutMs: number | undefined; how: string },
    control: CallControl,
  ): Promise<void> {
    if (control.stopped) throw control.error(TRANSCODE_WAIT);
    const unknown: string[] = [];
    for (const ticket of tickets) if (!(await this.isReady(ticket, control))) unknown.push(ticket);
    if (unknown.length === 0) return;
    const user_id = opts.probeUserId ?? this.#probeUserId;
    const [first] = unknown;
    if (user_id === undefined && first !== undefined) {
      throw new OAVideoNotConfirmedError(
        `Video ticket ${first} is not known to be ready, and no probe user was given: nothing was sent. ` +
          'A broadcast of a ticket still converting is accepted, then its job fails. To wait for it, ' +
          `${opts.how}: the video goes to that user first, once converted. Or send it with sendVideo ` +
          'first, or pass { waitForTranscode: false } to broadcast without waiting.',
        first,
      );
    }
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TRANSCODE_TIMEOUT_MS;
    const deadline = performance.now() + timeoutMs;
    for (const ticket of unknown) {
      await this.#confirm(ticket, user_id as string, deadline, control.signal, opts.requestTimeoutMs);
    }
  }

  /** Waits for a probe of `ticket` already in flight, else sends one. */
  async #confirm(
    ticket_id: string,
    user_id: string,
    deadline: number,
    signal: AbortSignal,
    requestTimeoutMs: number | undefined,
  ): Promise<void> {
    for (let running = this.#probes.get(ticket_id); running; running = this.#probes.get(ticket_id)) {
      const timer = sleep(
        Math.max(0, deadline - performance.now()),
        signal,
        'waiting for the video transcode',
      );
      const outcome = await Promise.race([
        running.then(
          () => 'done' as const,
          () => 'done' as const,
        ),
        timer.done,
      ]);
      timer.wake();
      if (outcome !== 'done') throw timeoutError(ticket_id);
      if (await this.isReady(ticket_id)) return;
    }
    const left = Math.round(deadline - performance.now());
    if (left <= 0) throw timeoutError(ticket_id);
    const started = performance.now();
    const probe = this.sendVideo(
      { user_id, ticket_id },
      {
        waitForTranscode: { timeoutMs: left },
        signal,
        ...(requestTimeoutMs === undefined ? {} : { timeoutMs: requestTimeoutMs }),
      },
    );
    this.#probes.set(ticket_id, probe);
    try {
      await probe;
    } finally {
      if (this.#probes.get(ticket_id) === probe) this.#probes.delete(ticket_id);
    }
    const waitedMs = Math.round(performance.now() - started);
    this.#ctx.logger.info?.(
      `oa-messaging: video ticket ${ticket_id} is ready: delivered to the probe user ${user_id} ` +
        `after ${waitedMs} ms`,
    );
    this.#ctx.events.emit('videoProbe', { ticket_id, user_id, waitedMs });
  }
}

function timeoutError(ticket_id: string): OATranscodeTimeoutError {
  return new OATranscodeTimeoutError(
    `Video ticket ${ticket_id} was not confirmed ready before the wait ran out`,
    ticket_id,
  );
}
