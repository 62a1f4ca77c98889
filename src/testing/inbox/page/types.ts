/**
 * What the page reads of the state the server pushes (../state.ts builds it, and checks there that
 * it gives all of this). Types only: shared by the page's build and the server's.
 */

/** A message item, with what the server added to draw it. */
export interface PageItem {
  type: string;
  msg?: unknown;
  /** The inbox's own address of the media bytes. */
  src?: string | undefined;
  /** The media URL is on the fake's own host, but no upload has it. */
  ownHost?: boolean | undefined;
  transcode?: string | undefined;
  link?: unknown;
  desc?: unknown;
  audio_duration?: unknown;
  audio_size?: unknown;
}

/** A bubble sent by the OA. */
export interface PageOAEntry {
  key: string;
  from: 'oa';
  at: number;
  endpoint: string;
  target: string;
  item: PageItem;
  failure?: string | undefined;
}

/** A reply typed in the page as a user, and what the webhook receiver answered. */
export interface PageUserEntry {
  key: string;
  from: 'user';
  at: number;
  kind: string;
  text?: string | undefined;
  status?: number | undefined;
  answer?: string | undefined;
  error?: string | undefined;
}

/** One row of the request timeline. */
export interface PageRequest {
  n: number;
  at: number;
  method: string;
  path: string;
  query: string;
  status?: number | undefined;
  code?: string | undefined;
  outcome: string;
  durationMs?: number | undefined;
  fault?: string | undefined;
  retryOf?: number | undefined;
  kind: string;
  body?: string | undefined;
  routine?: string | undefined;
}

/** Everything the page draws: one account's state, and the list of every account. */
export interface PageState {
  /** The username of the account shown. */
  account: string;
  /** Every account of the fake, first one first. */
  accounts: readonly { username: string; users: number; requests: number }[];
  users: readonly { user_id: string; count: number }[];
  conversations: Readonly<Record<string, readonly (PageOAEntry | PageUserEntry)[]>>;
  broadcasts: readonly {
    id: string;
    target: string;
    to: string;
    recipients: readonly string[];
    items: readonly PageItem[];
    failure?: string | undefined;
    record?: unknown;
  }[];
  timeline: readonly PageRequest[];
  timelineOmitted: number;
  faults: readonly { kind: string; remaining: number | null; path?: string | undefined; detail: string }[];
  webhookUrl: string;
  converting: boolean;
  members: {
    all?: readonly string[] | undefined;
    groups?: Readonly<Record<string, readonly string[]>> | undefined;
    memberSessions?: Readonly<Record<string, readonly string[]>> | undefined;
  };
}
