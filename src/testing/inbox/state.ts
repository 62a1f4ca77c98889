/**
 * What the web inbox shows, built from the fake's records on each change: one conversation per user
 * (as a phone shows it), the broadcasts, the request timeline and the faults waiting. Built on the
 * server so the page stays a thin view; nothing in it is a secret (see redact.ts).
 */
import type { FakeOA } from '../fake.js';
import type { Delivery, FakeMembers, InjectedFault, RecordedRequest, StoredUpload } from '../types.js';
import type { PageState } from './page/types.js';
import { redact, redactQuery } from './redact.js';

/** Who receives the broadcasts that name no users: the fake's `members`, by their former name. */
export type InboxMembers = FakeMembers;

/** A reply typed in the page as a user, and what the webhook receiver answered. */
export interface InboxReply {
  /** The username of the account the user wrote to. */
  account: string;
  user_id: string;
  kind: 'text' | 'image' | 'video' | 'audio';
  text?: string;
  at: number;
  webhookUrl: string;
  /** The receiver's status, once it answered. */
  status?: number;
  /** The receiver's answer, shortened. */
  answer?: string;
  /** Why the post failed (no answer). */
  error?: string;
}

/** A message item with what the page needs to draw it. */
type ViewItem = Record<string, unknown> & {
  type: string;
  /** The inbox's own address of the media bytes (an upload of this fake). */
  src?: string;
  /** A media URL of another host: shown as text, never fetched. */
  externalUrl?: string;
  /** The media URL is on this fake's own host, but no upload has it. */
  ownHost?: boolean;
  /** For videos: where the ticket is in its transcode. */
  transcode?: 'converting' | 'finished' | 'unknown';
};

/** One bubble of a conversation. */
type ConversationEntry =
  | {
      key: string;
      from: 'oa';
      at: number;
      endpoint: string;
      target: Delivery['target'];
      broadcastId?: string;
      item: ViewItem;
      failure?: string;
    }
  | ({ key: string; from: 'user' } & InboxReply);

/** One row of the timeline. */
interface TimelineEntry {
  n: number;
  at: number;
  method: string;
  path: string;
  query: string;
  status?: number;
  code?: string;
  outcome: RecordedRequest['outcome'];
  durationMs?: number;
  fault?: string;
  /** The row this one repeats after that one failed. */
  retryOf?: number;
  /** `login`, `refresh`, `upload`, `send`, `broadcast`, `file` or `other`. */
  kind: string;
  /** The body, secrets hidden, shortened. */
  body?: string;
  /** Why this error answer is routine, not a failure: a video still converting, polled again. */
  routine?: string;
}

/** What the page receives: the state of one account, and the list of all. */
export interface InboxState {
  /** The username of the account shown. */
  account: string;
  /** Every account of the fake, first one first, with how many conversations and requests each has. */
  accounts: { username: string; users: number; requests: number }[];
  users: { user_id: string; count: number; last: number }[];
  conversations: Record<string, ConversationEntry[]>;
  broadcasts: {
    id: string;
    endpoint: string;
    target: Delivery['target'];
    to: string;
    recipients: string[];
    items: ViewItem[];
    failure?: string;
    record?: unknown;
    at: number;
  }[];
  timeline: TimelineEntry[];
  /** Rows before these were left out. */
  timelineOmitted: number;
  faults: { kind: string; remaining: number; path?: string; detail: string }[];
  webhookUrl: string;
  /** Something is converting: the page asks again shortly (the transcode ends with time). */
  converting: boolean;
  /** The directory: who `all`, each group and each member session reach. */
  members: FakeMembers;
}

/** The timeline keeps this many of the newest requests. */
const TIMELINE_ROWS = 500;
const BODY_CHARS = 2000;

/** Where the page gets media: `/_inbox/media/N` serves the N-th upload of the fake. */
export const MEDIA_PREFIX = '/_inbox/media/';

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The path of `url` when it is on the fake's own host (by any loopback name); else nothing. */
function ownPath(url: string, fake: FakeOA): string | undefined {
  if (!URL.canParse(url) || !fake.publicUrl || !URL.canParse(fake.publicUrl)) return undefined;
  const given = new URL(url);
  const own = new URL(fake.publicUrl);
  const sameHost =
    given.hostname === own.hostname || (LOOPBACK.has(given.hostname) && LOOPBACK.has(own.hostname));
  return sameHost && given.port === own.port ? given.pathname : undefined;
}

function mediaSource(item: Record<string, unknown>, fake: FakeOA, media: string): Partial<ViewItem> {
  const msg = typeof item.msg === 'string' ? item.msg : '';
  const path = ownPath(msg, fake);
  const urls = (u: StoredUpload) => [u.result.url, u.result.audio_url].filter((v) => typeof v === 'string');
  const matches = (u: StoredUpload) =>
    item.type === 'video'
      ? u.result.ticket_id === msg
      : urls(u).some((url) => url === msg || (path !== undefined && ownPath(String(url), fake) === path));
  const index = fake.uploads.findIndex(matches);
  const view: Partial<ViewItem> = index >= 0 ? { src: `${MEDIA_PREFIX}${index}${media}` } : {};
  if (item.type === 'video') view.transcode = fake.transcodeStatus(msg) ?? 'unknown';
  else if (index < 0 && msg !== '') {
    view.externalUrl = msg;
    if (path !== undefined) view.ownHost = true;
  }
  return view;
}

function viewItem(item: Record<string, unknown>, fake: FakeOA, query: string): ViewItem {
  const type = String(item.type);
  const isMedia = ['image', 'oa_image_link', 'video', 'audio'].includes(type);
  const media = isMedia ? mediaSource(item, fake, query) : {};
  return { ...item, type, ...media };
}

function requestKind(path: string): string {
  if (path.endsWith('/auth/token')) return 'login';
  if (path.endsWith('/auth/refresh-token')) return 'refresh';
  if (path.includes('/upload/')) return 'upload';
  if (path.includes('/message/broadcast-')) return 'broadcast';
  if (path.includes('/webhook/broadcast-')) return 'send';
  if (path.startsWith('/uploads/')) return 'file';
  return 'other';
}

const failed = (r: RecordedRequest) => r.outcome !== 'pending' && !(r.status !== undefined && r.status < 300);

/** The newest rows, built from those requests only: the page may be open during a long run. */
function timeline(requests: readonly RecordedRequest[]): TimelineEntry[] {
  // The SDK sends nothing that marks a retry: a request equal to an earlier one that failed is one.
  const last = new Map<string, number>();
  const from = Math.max(0, requests.length - TIMELINE_ROWS);
  return requests.slice(from).map((r, i): TimelineEntry => {
    const n = from + i;
    const sameness = `${r.method} ${r.path}${r.query} ${JSON.stringify(r.body ?? r.parts?.map((p) => p.sha256))}`;
    const before = last.get(sameness);
    last.set(sameness, n);
    const shown = r.parts
      ? r.parts
          .map((p) => `${p.field}: ${p.filename ?? ''} ${p.contentType ?? ''} ${p.size} bytes`)
          .join('\n')
      : typeof r.body === 'string'
        ? `${r.size} bytes of text`
        : r.body === undefined
          ? undefined
          : JSON.stringify(redact(r.body), null, 1);
    const row: TimelineEntry = {
      n,
      at: r.at,
      method: r.method,
      path: r.path,
      query: redactQuery(r.query),
      outcome: r.outcome,
      kind: requestKind(r.path),
    };
    if (r.status !== undefined) row.status = r.status;
    if (r.code !== undefined) row.code = r.code;
    if (r.durationMs !== undefined) row.durationMs = r.durationMs;
    if (r.fault !== undefined) row.fault = r.fault;
    // The SDK polls a converting video until it is ready: expected answers, not failures.
    if (r.status === 400 && r.info === 'Video is in convert status') row.routine = r.info;
    const previous = before === undefined ? undefined : requests[before];
    if (before !== undefined && previous && failed(previous)) row.retryOf = before;
    if (shown !== undefined) row.body = shown.length > BODY_CHARS ? `${shown.slice(0, BODY_CHARS)}…` : shown;
    return row;
  });
}

function faultView(injected: InjectedFault): InboxState['faults'][number] {
  const { fault, options } = injected;
  const details: Record<string, string> = {
    error: `${'status' in fault ? (fault.status ?? 500) : 500} ${'code' in fault ? (fault.code ?? '') : ''}`,
    'rate-limit': '429',
    delay: `${'delayMs' in fault ? (fault.delayMs ?? 2000) : 2000} ms`,
  };
  const view: InboxState['faults'][number] = {
    kind: fault.kind,
    remaining: injected.remaining,
    detail: (details[fault.kind] ?? '').trim(),
  };
  if (options.path !== undefined) view.path = String(options.path);
  return view;
}

/** The users with a conversation in an account: those it knows, its members, those sent to. */
function usersOf(fake: FakeOA, replies: readonly InboxReply[]): Set<string> {
  const { members } = fake;
  return new Set([
    ...(fake.knownUsers ?? []),
    ...(members.all ?? []),
    ...Object.values(members.groups ?? {}).flat(),
    ...Object.values(members.memberSessions ?? {}).flat(),
    ...fake.deliveries.flatMap((d) => d.user_ids),
    ...replies.filter((r) => r.account === fake.username).map((r) => r.user_id),
  ]);
}

/**
 * Builds what the page shows of one account (`fake.account(name)`; the first by default) from its
 * records, its members and the replies typed to it so far. Its media are served at
 * `/_inbox/media/N`, with `?account=NAME` for an account other than the first.
 */
export function buildInboxState(
  root: FakeOA,
  allReplies: readonly InboxReply[],
  webhookUrl: string,
  account?: string,
): InboxState {
  const fake = root.account(account);
  const first = root.accounts[0] === fake;
  const query = first ? '' : `?account=${encodeURIComponent(fake.username)}`;
  const replies = allReplies.filter((r) => r.account === fake.username);
  const members = fake.members;
  const conversations: Record<string, ConversationEntry[]> = {};
  const into = (user: string) => {
    conversations[user] ??= [];
    return conversations[user];
  };
  for (const user of usersOf(fake, replies)) into(user);

  const broadcasts: InboxState['broadcasts'] = [];
  let converting = false;
  for (const d of fake.deliveries) {
    const items = d.items.map((item) => viewItem(item, fake, query));
    converting ||= items.some((item) => item.transcode === 'converting');
    const recipients = d.recipients;
    items.forEach((item, i) => {
      for (const user of recipients) {
        const entry: ConversationEntry = {
          key: `${d.id}:${i}`,
          from: 'oa',
          at: d.at,
          endpoint: d.endpoint,
          target: d.target,
          item,
        };
        if (d.target !== 'user') entry.broadcastId = d.id;
        if (d.failure !== undefined) entry.failure = d.failure;
        into(user).push(entry);
      }
    });
    if (d.target === 'user') continue;
    const to =
      d.account_provider_group_id ?? d.member_group_broadcast_id ?? (d.target === 'all' ? 'all users' : '');
    broadcasts.push({
      id: d.id,
      endpoint: d.endpoint,
      target: d.target,
      to: to || d.user_ids.join(', '),
      recipients,
      items,
      ...(d.failure === undefined ? {} : { failure: d.failure }),
      ...(d.record === undefined ? {} : { record: d.record }),
      at: d.at,
    });
  }
  replies.forEach((reply, i) => {
    into(reply.user_id).push({ key: `reply:${i}`, from: 'user', ...reply });
  });
  for (const list of Object.values(conversations)) list.sort((a, b) => a.at - b.at);

  const users = Object.entries(conversations)
    .map(([user_id, list]) => ({ user_id, count: list.length, last: list.at(-1)?.at ?? 0 }))
    .sort((a, b) => a.user_id.localeCompare(b.user_id, 'en', { numeric: true }));
  const rows = timeline(fake.requests);
  const state: InboxState = {
    account: fake.username,
    accounts: root.accounts.map((a) => ({
      username: a.username,
      users: usersOf(a, allReplies).size,
      requests: a.requests.length,
    })),
    users,
    conversations,
    broadcasts,
    timeline: rows,
    timelineOmitted: fake.requests.length - rows.length,
    faults: fake.faults.map(faultView),
    webhookUrl,
    converting,
    members,
  };
  // The page reads all it needs of this (page/types.ts): it is built apart and typed apart.
  return state satisfies PageState;
}
