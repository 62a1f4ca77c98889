/**
 * Realistic inbound events (spec "Events"): the OA envelope around a Tencent Cloud IM message callback,
 * posted to a receiver the way the OA service would.
 */
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import type { Dispatcher } from 'undici';

/** A message a client sends to the OA account. A string is a text message. */
export type InboundMessage =
  | string
  | {
      /** The kind of message. */
      type: 'text';
      /** The text. */
      text: string;
    }
  | {
      /** The kind of message. */
      type: 'image';
      /** Base URL of the renditions; each gets its own path suffix and signed query. */
      url?: string | undefined;
      /** Its id in the IM service. */
      uuid?: string | undefined;
      /** Its format as sent. */
      format?: 'jpg' | 'gif' | 'png' | 'bmp' | 'other' | undefined;
      /** Of the original. @default 1080 x 1920 */
      width?: number | undefined;
      /** Its height in pixels. */
      height?: number | undefined;
      /** Bytes of the original. @default 204800 */
      size?: number | undefined;
    }
  | {
      /** The kind of message. */
      type: 'video';
      /** Its URL; by default one of a fake CDN. */
      url?: string | undefined;
      /** Its id in the IM service. */
      uuid?: string | undefined;
      /** @default 5 */
      seconds?: number | undefined;
      /** @default 1048576 */
      size?: number | undefined;
      /** @default 'mp4' */
      format?: string | undefined;
      /** Where its thumbnail is. */
      thumbUrl?: string | undefined;
    }
  | {
      /** The kind of message. */
      type: 'sound' | 'audio';
      /** Its URL; by default one of a fake CDN. */
      url?: string | undefined;
      /** Its id in the IM service. */
      uuid?: string | undefined;
      /** @default 3 */
      seconds?: number | undefined;
      /** @default 24000 */
      size?: number | undefined;
    }
  /** `MsgBody` elements as given, e.g. several in one message or a type this helper does not build. */
  | {
      /** The kind of message. */
      type: 'elements';
      /** The `MsgBody` elements. */
      elements: Record<string, unknown>[];
    }
  /** The body posted as it is: a string or bytes verbatim, anything else as JSON. */
  | {
      /** Not a message: a body of your own. */
      type: 'raw';
      /** What to post. */
      body: unknown;
    };

/** Options of {@link sendInboundMessage} and {@link buildInboundEvent}. */
export interface InboundMessageOptions {
  /** `From_Account`: the client user. @default 'user_1' */
  from?: string | undefined;
  /** `To_Account`: the OA's IM account. @default 'oa_account' */
  to?: string | undefined;
  /** `username` of the envelope: the OA account. @default the `to` value */
  username?: string | undefined;
  /** @default a number that grows with each event of this process */
  msgSeq?: number | undefined;
  /** @default a random 32-bit number */
  msgRandom?: number | undefined;
  /** Seconds since the epoch. @default now */
  msgTime?: number | undefined;
  /** Fields merged over the generated `data` (the callback). */
  data?: Record<string, unknown> | undefined;
  /** Fields merged over the generated envelope (`event_type`, `username`, `timestamp`). */
  envelope?: Record<string, unknown> | undefined;
  /** Extra request headers. */
  headers?: Record<string, string> | undefined;
  /** @default 10_000 */
  timeoutMs?: number | undefined;
  /** An undici dispatcher to send with. @default a fresh Agent, closed after the call */
  dispatcher?: Dispatcher | undefined;
}

/** What the receiver answered, and what was posted. */
export interface InboundDelivery {
  /** The HTTP status. */
  status: number;
  /** The headers. */
  headers: Record<string, string | string[] | undefined>;
  /** The answer parsed as JSON, else its text. */
  body: unknown;
  /** The text. */
  text: string;
  /** The event that was posted (for `raw`, the body given). */
  event: unknown;
}

let sequence = 0;

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

/** A media URL with the temporary signed query parameters Tencent adds. */
function signedUrl(base: string, msgTime: number): string {
  const url = new URL(base);
  url.searchParams.set('sign', hex(16));
  url.searchParams.set('t', String(msgTime + 3600));
  return url.href;
}

const IMAGE_FORMATS = { jpg: 1, gif: 2, png: 3, bmp: 4, other: 255 } as const;

function element(message: Exclude<InboundMessage, string | { type: 'elements' | 'raw' }>, time: number) {
  const media = `https://im-media.example.com/${hex(8)}`;
  switch (message.type) {
    case 'text':
      return { MsgType: 'TIMTextElem', MsgContent: { Text: message.text } };
    case 'image': {
      const base = message.url ?? `${media}/${hex(16)}`;
      const width = message.width ?? 1080;
      const height = message.height ?? 1920;
      const size = message.size ?? 204_800;
      const scaled = (edge: number) => {
        const factor = Math.min(1, edge / Math.max(width, height));
        return { Width: Math.round(width * factor), Height: Math.round(height * factor) };
      };
      return {
        MsgType: 'TIMImageElem',
        MsgContent: {
          UUID: message.uuid ?? hex(16).toUpperCase(),
          ImageFormat: IMAGE_FORMATS[message.format ?? 'jpg'],
          ImageInfoArray: [
            { Type: 1, Size: size, Width: width, Height: height, URL: signedUrl(`${base}/0`, time) },
            { Type: 2, Size: Math.round(size / 2), ...scaled(720), URL: signedUrl(`${base}/720`, time) },
            { Type: 3, Size: Math.round(size / 20), ...scaled(198), URL: signedUrl(`${base}/198`, time) },
          ],
        },
      };
    }
    case 'video':
      return {
        MsgType: 'TIMVideoFileElem',
        MsgContent: {
          VideoUrl: signedUrl(message.url ?? `${media}/${hex(16)}`, time),
          VideoUUID: message.uuid ?? hex(16),
          VideoSize: message.size ?? 1_048_576,
          VideoSecond: message.seconds ?? 5,
          VideoFormat: message.format ?? 'mp4',
          VideoDownloadFlag: 2,
          ThumbUrl: signedUrl(message.thumbUrl ?? `${media}/${hex(16)}`, time),
          ThumbUUID: hex(16),
          ThumbSize: 13_907,
          ThumbWidth: 720,
          ThumbHeight: 1280,
          ThumbFormat: 'JPG',
          ThumbDownloadFlag: 2,
        },
      };
    case 'sound':
    case 'audio':
      return {
        MsgType: 'TIMSoundElem',
        MsgContent: {
          Url: signedUrl(message.url ?? `${media}/${hex(16)}`, time),
          UUID: message.uuid ?? hex(20).toUpperCase(),
          Size: message.size ?? 24_000,
          Second: message.seconds ?? 3,
          Download_Flag: 2,
        },
      };
  }
}

/** The text a push notification shows for a message. */
function pushDesc(body: Record<string, unknown>[]): string {
  const first = body[0] as { MsgType?: string; MsgContent?: { Text?: string } } | undefined;
  const labels: Record<string, string> = {
    TIMImageElem: '[Image]',
    TIMVideoFileElem: '[Video]',
    TIMSoundElem: '[Voice]',
  };
  return first?.MsgContent?.Text ?? labels[first?.MsgType ?? ''] ?? '[Message]';
}

/**
 * The event the OA service would post for `message`: `{ event_type: 'message', username, data,
 * timestamp }` with `data` a `C2C.CallbackAfterSendMsg` callback carrying one `MsgBody` element (or the
 * given ones). For `raw`, the body given.
 */
export function buildInboundEvent(message: InboundMessage, options: InboundMessageOptions = {}): unknown {
  if (typeof message === 'object' && message.type === 'raw') return message.body;
  const now = Date.now();
  const MsgTime = options.msgTime ?? Math.floor(now / 1000);
  const MsgSeq = options.msgSeq ?? ++sequence;
  const MsgRandom = options.msgRandom ?? randomInt(0, 2 ** 32);
  const msg = typeof message === 'string' ? ({ type: 'text', text: message } as const) : message;
  const MsgBody = msg.type === 'elements' ? msg.elements : [element(msg, MsgTime)];
  const to = options.to ?? 'oa_account';
  const data = {
    CallbackCommand: 'C2C.CallbackAfterSendMsg',
    From_Account: options.from ?? 'user_1',
    To_Account: to,
    MsgSeq,
    MsgRandom,
    MsgTime,
    MsgKey: `${MsgSeq}_${MsgRandom}_${MsgTime}`,
    MsgId: `${BigInt(`0x${hex(7)}`)}-${MsgTime}-${MsgRandom}`,
    MsgVersion: 0,
    InstanceId: 1400187352,
    SupportMessageExtension: 0,
    OnlineOnlyFlag: 0,
    SendMsgResult: 0,
    ErrorInfo: 'send msg succeed',
    UnreadMsgNum: 1,
    EventTime: now,
    OfflinePushInfo: {
      PushFlag: 0,
      Desc: pushDesc(MsgBody),
      Ext: JSON.stringify({ entity: { id: randomUUID() } }),
    },
    MsgBody,
    ...options.data,
  };
  return {
    event_type: 'message',
    username: options.username ?? to,
    data,
    timestamp: new Date(now).toISOString(),
    ...options.envelope,
  };
}

/**
 * Posts a realistic inbound event to a webhook receiver, as the OA service would (spec "Events"), and
 * resolves to the receiver's answer. Works with or without a mock server.
 *
 * @example
 * ```ts
 * const { status } = await sendInboundMessage(`${receiverUrl}/oa/webhook`, 'hello', { from: 'user_42' });
 * await sendInboundMessage(url, { type: 'image', width: 640, height: 480 });
 * ```
 */
export async function sendInboundMessage(
  webhookUrl: string | URL,
  message: InboundMessage,
  options: InboundMessageOptions = {},
): Promise<InboundDelivery> {
  const event = buildInboundEvent(message, options);
  const body = typeof event === 'string' || event instanceof Uint8Array ? event : JSON.stringify(event);
  // Loaded here, not at import: importing the testing kit opens nothing.
  const { Agent, request } = await import('undici');
  const dispatcher = options.dispatcher ?? new Agent();
  try {
    const res = await request(webhookUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...options.headers },
      body,
      dispatcher,
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    return { status: res.statusCode, headers: res.headers, body: parsed, text, event };
  } finally {
    // A dispatcher of our own leaves no socket behind.
    if (!options.dispatcher) await dispatcher.close();
  }
}
