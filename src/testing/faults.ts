/** Injected faults: which requests they hit and how many times. */
import { STATUS_CODES } from 'node:http';
import { type Answer, API, codeForStatus, errorAnswer, jsonAnswer } from './answers.js';
import type { Fault, FaultKind, FaultOptions, InjectedFault } from './types.js';

interface Entry {
  fault: Fault;
  remaining: number;
  options: FaultOptions;
  handle: InjectedFault;
}

function matches(options: FaultOptions, method: string, path: string): boolean {
  if (options.method !== undefined && options.method.toUpperCase() !== method) return false;
  const { path: want } = options;
  if (want === undefined) return path.startsWith(`${API}/`) && !path.startsWith(`${API}/auth/`);
  if (typeof want === 'string') return path === want || path.endsWith(want);
  want.lastIndex = 0;
  return want.test(path);
}

/** The faults waiting to hit requests, in the order they were injected. */
export class FaultQueue {
  #entries: Entry[] = [];

  /** Queues a fault; a number is an `error` with that status, a kind alone uses its defaults. */
  add(fault: Fault | FaultKind | number, options: FaultOptions = {}): InjectedFault {
    const resolved: Fault =
      typeof fault === 'number'
        ? { kind: 'error', status: fault }
        : typeof fault === 'string'
          ? ({ kind: fault } as Fault)
          : fault;
    const times = options.times ?? 1;
    if (!(times > 0)) throw new RangeError('injectFault: times must be a positive number');
    const entry = { fault: resolved, remaining: times, options } as Entry;
    entry.handle = {
      fault: resolved,
      options,
      get remaining() {
        return entry.remaining;
      },
      remove: () => {
        entry.remaining = 0;
        this.#entries = this.#entries.filter((e) => e !== entry);
      },
    };
    this.#entries.push(entry);
    return entry.handle;
  }

  /** The faults still queued, oldest first. */
  list(): InjectedFault[] {
    return this.#entries.map((e) => e.handle);
  }

  /** The first fault that matches, used up by one. */
  take(method: string, path: string): Fault | undefined {
    const entry = this.#entries.find((e) => matches(e.options, method, path));
    if (!entry) return undefined;
    entry.remaining--;
    if (entry.remaining <= 0) this.#entries = this.#entries.filter((e) => e !== entry);
    return entry.fault;
  }

  /** Drops every queued fault. */
  clear(): void {
    for (const entry of this.#entries) entry.remaining = 0;
    this.#entries = [];
  }
}

/** The answer of an `error` fault. */
export function faultErrorAnswer(
  fault: Extract<Fault, { kind: 'error' }>,
  path: string,
  now: number,
): Answer {
  const status = fault.status ?? 500;
  const headers = fault.headers ?? {};
  if (typeof fault.body === 'string') {
    return {
      status,
      headers: { 'content-type': 'text/html; charset=utf-8', ...headers },
      body: Buffer.from(fault.body),
    };
  }
  if (fault.body !== undefined) return jsonAnswer(status, fault.body, headers);
  const info = fault.info ?? STATUS_CODES[status] ?? 'Error';
  return errorAnswer(status, fault.code ?? codeForStatus(status), info, path, now, headers);
}
