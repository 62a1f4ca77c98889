/** How the page draws a message: its items, flex layouts and the bubbles of a conversation. */
import { clock, h } from './dom.js';
import type { PageItem, PageOAEntry, PageUserEntry } from './types.js';

const SAFE_LINK = /^https?:\/\//i;
const COLOR = /^#[0-9a-f]{3,8}$/i;
const SIZES: Record<string, string> = {
  xxs: '10px',
  xs: '11px',
  sm: '13px',
  md: '14px',
  lg: '16px',
  xl: '18px',
  xxl: '21px',
};

/** A field of a value received, which may be anything. */
function at(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

/** A value received as text: empty where there is none. */
function text(value: unknown): string {
  return value === undefined || value === null ? '' : String(value);
}

/** A link that may be opened: http(s) only. */
function safeLink(value: unknown): string | null {
  return typeof value === 'string' && SAFE_LINK.test(value) ? value : null;
}

/** A flex layout drawn as a card; null where its structure is not one this page knows. */
function flexNode(node: unknown): HTMLElement | null {
  if (!node || typeof node !== 'object') return null;
  const list = (nodes: unknown) =>
    Array.isArray(nodes) ? nodes.map(flexNode).filter((n): n is HTMLElement => n !== null) : [];
  switch (at(node, 'type')) {
    case 'carousel':
      return h('div', { className: 'flex-carousel' }, ...list(at(node, 'contents')));
    case 'bubble': {
      const card = h('div', { className: 'flex-card' });
      for (const part of ['header', 'hero', 'body', 'footer']) {
        const drawn = flexNode(at(node, part));
        if (drawn) card.appendChild(h('div', { className: `flex-part ${part}` }, drawn));
      }
      return card;
    }
    case 'box':
      return h(
        'div',
        { className: `flex-box ${text(at(node, 'layout')) || 'vertical'}` },
        ...list(at(node, 'contents')),
      );
    case 'text': {
      const t = h('div', { className: 'flex-text', text: text(at(node, 'text')) });
      const color = at(node, 'color');
      const size = SIZES[text(at(node, 'size'))];
      if (at(node, 'weight') === 'bold') t.style.fontWeight = '700';
      if (typeof color === 'string' && COLOR.test(color)) t.style.color = color;
      if (size) t.style.fontSize = size;
      return t;
    }
    case 'button': {
      const action = at(node, 'action');
      return h('a', {
        className: 'flex-button',
        href: safeLink(at(action, 'uri')),
        target: '_blank',
        rel: 'noopener noreferrer',
        text: text(at(action, 'label')) || 'Button',
      });
    }
    case 'image':
      // Only the fake's own address is ever fetched: a layout's image is named, not loaded.
      return h('div', { className: 'external', text: `image: ${text(at(node, 'url'))}` });
    case 'separator':
      return h('hr');
    case 'spacer':
      return h('div', { style: 'height:8px' });
    default:
      return null;
  }
}

function flexItem(item: PageItem): HTMLElement {
  const raw = Array.isArray(item.msg) ? item.msg.join('') : String(item.msg);
  try {
    const parsed: unknown = JSON.parse(raw);
    return flexNode(parsed) ?? h('pre', { className: 'flex-raw', text: JSON.stringify(parsed, null, 2) });
  } catch {
    return h('pre', { className: 'flex-raw', text: raw });
  }
}

function external(label: string, url: string, own: boolean | undefined): HTMLElement {
  const why = own ? ' (not stored on this fake)' : ' (another host: not loaded)';
  return h('div', { className: 'external', text: `${label} at ${url}${why}` });
}

/** One message item: text, media, a link, a flex layout, or its JSON. */
export function itemNode(item: PageItem): HTMLElement {
  const msg = Array.isArray(item.msg) ? item.msg.join('\n') : text(item.msg);
  switch (item.type) {
    case 'message':
      return h('div', { className: 'text', text: msg });
    case 'image':
      return item.src ? h('img', { src: item.src, alt: 'image' }) : external('Image', msg, item.ownHost);
    case 'oa_image_link':
      return h(
        'a',
        {
          className: 'image-link',
          href: safeLink(item.link),
          target: '_blank',
          rel: 'noopener noreferrer',
          title: item.link === undefined || item.link === null ? null : String(item.link),
        },
        item.src ? h('img', { src: item.src, alt: 'image link' }) : external('Image', msg, item.ownHost),
        h('div', { className: 'meta', text: `opens ${String(item.link)}` }),
      );
    case 'flex':
      return flexItem(item);
    case 'video':
      if (item.transcode === 'converting') return h('div', { className: 'converting', text: 'converting…' });
      if (!item.src) {
        return h('div', { className: 'external', text: `video ticket ${msg} (unknown to this fake)` });
      }
      return h('video', { src: item.src, controls: true, preload: 'metadata' });
    case 'audio':
      if (!item.src) return external('Audio', msg, item.ownHost);
      return h(
        'div',
        null,
        h('audio', { src: item.src, controls: true, preload: 'metadata' }),
        h('div', {
          className: 'meta',
          text: `${String(item.audio_duration || '?')} s, ${String(item.audio_size || '?')} bytes`,
        }),
      );
    default:
      return h('pre', { text: JSON.stringify(item, null, 2) });
  }
}

/** The endpoints' names as the page says them. */
const VIA: Record<string, string> = {
  sendGreeting: 'greeting',
  sendText: 'text',
  sendImage: 'image',
  sendVideo: 'video',
  sendAudio: 'audio',
  broadcast: 'broadcast',
  broadcastToGroup: 'group broadcast',
  broadcastToMemberSession: 'member-session broadcast',
};

function userBubble(entry: PageUserEntry): HTMLElement {
  const answer =
    entry.status !== undefined
      ? `webhook answered ${entry.status}${entry.answer ? `: ${entry.answer}` : ''}`
      : entry.error
        ? `not delivered: ${entry.error}`
        : 'sending…';
  // Not delivered: no answer, or one the receiver refused with.
  const failed = entry.error !== undefined || (entry.status !== undefined && entry.status >= 300);
  return h(
    'div',
    { className: `msg user${failed ? ' failed' : ''}`, 'data-type': `reply-${entry.kind}` },
    h('div', { className: 'text', text: entry.kind === 'text' ? text(entry.text) : `[${entry.kind}]` }),
    h('div', { className: 'meta answer', text: `${clock(entry.at)} · ${answer}` }),
  );
}

/** One entry of a conversation: a reply typed as the user, or what the OA sent. */
export function messageNode(entry: PageOAEntry | PageUserEntry): HTMLElement {
  if (entry.from === 'user') return userBubble(entry);
  const item = entry.item;
  let via = VIA[entry.endpoint] ?? entry.endpoint;
  if (entry.target !== 'user') via += ` (${entry.target})`;
  const bubble = h(
    'div',
    { className: 'msg oa', 'data-type': item.type, 'data-via': entry.endpoint },
    itemNode(item),
    entry.failure ? h('div', { className: 'failure', text: `job failed: ${entry.failure}` }) : null,
    h('div', { className: 'meta', text: `${clock(entry.at)} · ${via}` }),
  );
  if (item.type !== 'message' || !item.desc) return bubble;
  // desc is the push notification's text: shown as the phone would show it, above the message.
  return h(
    'div',
    { style: 'display:contents' },
    h(
      'div',
      { className: 'push' },
      h('b', { text: 'Push' }),
      h('span', { className: 'desc', text: text(item.desc) }),
    ),
    bubble,
  );
}
