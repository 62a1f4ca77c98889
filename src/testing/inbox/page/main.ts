/**
 * The web inbox's script, run in the browser: it draws the state the server pushes over server-sent
 * events. Built into one inline script (../script.ts); DOM nodes are built with textContent, so no
 * text from a message is ever read as HTML.
 */
import { $, clock, type Entry, field, forget, h, sync } from './dom.js';
import { itemNode, messageNode } from './items.js';
import type { PageRequest, PageState } from './types.js';

const API_PREFIX = '/api/v2/public/';

let state: PageState | null = null;
/**
 * The account shown (its username): the one the address names, as the page keeps it (`#account=`) or
 * as a link or a screenshot names it (`/?account=shop-b`); `''`: the first, until the server says its
 * name.
 */
let account =
  decodeURIComponent(/account=([^&]*)/.exec(location.hash)?.[1] ?? '') ||
  (new URLSearchParams(location.search).get('account') ?? '');
let selected = decodeURIComponent(/user=([^&]*)/.exec(location.hash)?.[1] ?? '');
/** Kept at the newest message while the reader is there. */
let stick = true;
/** Where the page itself last scrolled the conversation to. */
let scrolledTo: number | undefined;

/** A field of a value received, which may be anything. */
function at(value: unknown, key: string): unknown {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
}

function renderUsers(s: PageState): void {
  if (!selected && s.users[0]) selected = s.users[0].user_id;
  let entries: Entry[] = s.users.map((u) => ({
    key: u.user_id,
    sig: u.count + (u.user_id === selected ? '*' : ''),
    build: () => {
      const li = h(
        'li',
        { 'data-user': u.user_id, className: u.user_id === selected ? 'selected' : '' },
        h('span', { text: u.user_id }),
        h('span', { className: 'count', text: String(u.count) }),
      );
      li.addEventListener('click', () => select(u.user_id));
      return li;
    },
  }));
  if (!entries.length) {
    entries = [{ key: '', sig: '', build: () => h('li', { className: 'empty', text: 'Nothing sent yet.' }) }];
  }
  sync($('users'), entries);
}

/** The page's address: the account (when there are several) and the conversation shown. */
function remember(): void {
  const several = (state?.accounts.length ?? 0) > 1;
  const parts = [
    several && account ? `account=${encodeURIComponent(account)}` : '',
    selected ? `user=${encodeURIComponent(selected)}` : '',
  ].filter(Boolean);
  history.replaceState(null, '', `#${parts.join('&')}`);
}

/** The account list, shown when the fake serves several: a click shows that account's inbox. */
function renderAccounts(s: PageState): void {
  $('accounts-section').hidden = s.accounts.length < 2;
  sync(
    $('accounts'),
    s.accounts.map((a) => ({
      key: a.username,
      sig: `${a.users} ${a.requests}${a.username === s.account ? '*' : ''}`,
      build: () => {
        const li = h(
          'li',
          { 'data-account': a.username, className: a.username === s.account ? 'selected' : '' },
          h('span', { text: a.username }),
          h('span', { className: 'count', text: `${a.users} users · ${a.requests} requests` }),
        );
        li.addEventListener('click', () => showAccount(a.username));
        return li;
      },
    })),
  );
}

/** Shows another account: its conversations, broadcasts, faults and timeline, live. */
function showAccount(username: string): void {
  if (username === state?.account) return;
  account = username;
  selected = '';
  remember();
  const box = $('messages');
  box.replaceChildren();
  forget(box);
  stick = true;
  connect();
}

function select(user: string): void {
  selected = user;
  remember();
  const box = $('messages');
  box.replaceChildren();
  forget(box);
  stick = true;
  render();
}

function renderConversation(s: PageState): void {
  const box = $('messages');
  const list = s.conversations[selected] ?? [];
  $('title').textContent = selected ? selected : 'No conversation yet';
  $('title').setAttribute('data-user', selected);
  const before = box.children.length;
  sync(
    box,
    list.map((e) => ({ key: e.key, sig: JSON.stringify(e), build: () => messageNode(e) })),
  );
  if (stick || box.children.length > before) toBottom(box);
}

function renderBroadcasts(s: PageState): void {
  sync(
    $('broadcasts'),
    s.broadcasts
      .slice()
      .reverse()
      .map((b) => ({
        key: b.id,
        sig: JSON.stringify(b),
        build: () => {
          const detail = at(b.record, 'estimate_time_detail');
          const minutes = detail ? at(detail, 'total_job_time_minutes') : '?';
          const recipients = b.recipients.length
            ? `reached: ${b.recipients.join(', ')}`
            : `reached nobody: no members for this ${b.target} (give them with the members option, or oa mock-server --group / --member-session ID=USER,USER)`;
          return h(
            'li',
            { 'data-broadcast': b.id, 'data-target': b.target },
            h(
              'details',
              null,
              h('summary', { text: `${b.target} → ${b.to} · ${b.items.map((i) => i.type).join(', ')}` }),
              h('div', {
                text: `record ${b.id} · ${b.record ? String(at(b.record, 'broadcast_at')) : ''} · job ~${String(minutes)} min`,
              }),
              h('div', { className: 'recipients', text: recipients }),
              b.failure ? h('div', { className: 'failure', text: `job failed: ${b.failure}` }) : null,
              h(
                'div',
                { className: 'items' },
                ...b.items.map((i) => h('div', { className: 'msg' }, itemNode(i))),
              ),
            ),
          );
        },
      })),
  );
}

function renderDirectory(s: PageState): void {
  const m = s.members;
  const rows: [string, string, readonly string[] | undefined][] = [['all', 'users', m.all]];
  for (const [id, list] of Object.entries(m.groups ?? {})) rows.push([`g:${id}`, `group ${id}`, list]);
  for (const [id, list] of Object.entries(m.memberSessions ?? {})) {
    rows.push([`s:${id}`, `member session ${id}`, list]);
  }
  sync(
    $('directory'),
    rows.map(([key, name, list]) => {
      const text = `${name}: ${list ? list.join(', ') : 'everyone sent to so far'}`;
      return { key, sig: text, build: () => h('li', { 'data-member-list': key, text }) };
    }),
  );
}

function renderFaults(s: PageState): void {
  sync(
    $('faults'),
    s.faults.map((f, i) => {
      const text = `${f.kind}${f.detail ? ` ${f.detail}` : ''} · ${f.remaining === null ? 'every request' : `${f.remaining} left`}${f.path ? ` · ${f.path}` : ''}`;
      return { key: String(i), sig: text, build: () => h('li', { 'data-fault': f.kind, text }) };
    }),
  );
}

const failed = (r: PageRequest) =>
  (r.status !== undefined && r.status >= 400) || r.outcome === 'reset' || r.outcome === 'hang';

/** The timeline's filters: the kind of request, and text it contains. */
function shown(r: PageRequest): boolean {
  const kind = field('filter-kind').value;
  if (kind === 'errors' && (r.routine || !failed(r))) return false;
  if (kind === 'retries' && r.retryOf === undefined) return false;
  if (kind === 'auth' && r.kind !== 'login' && r.kind !== 'refresh') return false;
  if (kind === 'faults' && !r.fault) return false;
  const q = field('filter').value.trim().toLowerCase();
  if (!q) return true;
  return [r.method, r.path, r.status, r.code, r.kind, r.fault].join(' ').toLowerCase().includes(q);
}

function timelineRow(r: PageRequest): HTMLElement {
  const tags: HTMLElement[] = [];
  const tag = (className: string, text: string, title?: string) =>
    tags.push(h('span', { className: `tag${className ? ` ${className}` : ''}`, text, title }));
  if (r.kind === 'login' || r.kind === 'refresh') {
    tag(r.kind, r.kind === 'login' ? 'token login' : 'token refresh');
  }
  if (r.retryOf !== undefined) tag('retry', `retry of #${r.retryOf}`);
  if (r.status === 429) tag('', '429');
  if (r.routine) tag('routine', 'converting: polled again', r.routine);
  if (r.fault) tag('fault', `fault: ${r.fault}`);
  if (r.outcome !== 'answered' && r.outcome !== 'pending') tag('fault', r.outcome);
  // Every API path shares this prefix: the rest is what tells rows apart.
  const path = r.path.startsWith(API_PREFIX) ? r.path.slice(API_PREFIX.length) : r.path;
  const request = h(
    'details',
    { title: r.path + r.query },
    h('summary', { text: `${r.method} ${path}${r.query}` }),
    r.body ? h('pre', { text: r.body }) : null,
  );
  const cls = r.routine
    ? 'routine'
    : (failed(r) ? 'error' : '') + (r.outcome === 'pending' ? ' pending' : '');
  return h(
    'tr',
    {
      className: cls,
      'data-n': r.n,
      'data-kind': r.kind,
      'data-retry': r.retryOf !== undefined ? String(r.retryOf) : null,
      'data-status': r.status,
    },
    // The badges go under the request, which stays on one line however many there are.
    h('td', { text: String(r.n) }),
    h('td', { text: clock(r.at) }),
    h('td', { className: 'request' }, request, tags.length ? h('div', { className: 'tags' }, ...tags) : null),
    h('td', { text: r.status === undefined ? '…' : String(r.status) }),
    h('td', { text: r.code ?? '', title: r.code || null }),
    h('td', { text: r.durationMs === undefined ? '' : String(r.durationMs) }),
  );
}

function renderTimeline(s: PageState): void {
  const rows = s.timeline.filter(shown).reverse();
  sync(
    $('timeline'),
    rows.map((r) => ({ key: String(r.n), sig: JSON.stringify(r), build: () => timelineRow(r) })),
  );
  $('omitted').textContent = s.timelineOmitted ? `(${s.timelineOmitted} older not shown)` : '';
}

function render(): void {
  if (!state) return;
  renderAccounts(state);
  renderUsers(state);
  renderConversation(state);
  renderBroadcasts(state);
  renderDirectory(state);
  renderFaults(state);
  renderTimeline(state);
  const input = field('webhook-url');
  if (document.activeElement !== input && !input.dataset.dirty) input.value = state.webhookUrl;
}

let again: ReturnType<typeof setTimeout> | null = null;
function receive(next: PageState): void {
  // An update of the account shown before a switch, still on its way: not this account's.
  if (account !== '' && next.account !== account) return;
  account = next.account;
  state = next;
  render();
  // A transcode ends with time, not with a request: look again while something converts.
  if (state.converting && !again) {
    again = setTimeout(() => {
      again = null;
      refresh();
    }, 500);
  }
}

function refresh(): void {
  fetch(`/_inbox/state${accountQuery()}`)
    .then((r) => r.json() as Promise<PageState>)
    .then(receive)
    .catch(() => {});
}

/** The answer of a POST to the inbox's own API. */
type Answer = { error?: string; status?: number; answer?: string };

/** The query naming the account shown, for the inbox's own requests. */
const accountQuery = () => (account ? `?account=${encodeURIComponent(account)}` : '');

async function post(path: string, body: object = {}): Promise<Answer> {
  const r = await fetch(`/_inbox/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    // Every change the page makes is to the account shown (a fault, a reply as its user ...).
    body: JSON.stringify(account ? { ...body, account } : body),
  });
  const j = (await r.json()) as Answer;
  if (!r.ok) throw new Error(j.error || String(r.status));
  return j;
}

/** Why a post failed, in words. */
const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

let events: EventSource | null = null;
function connect(): void {
  events?.close();
  events = new EventSource(`/_inbox/events${accountQuery()}`);
  events.onopen = () => {
    $('live').textContent = 'live';
    $('live').className = 'on';
  };
  events.onmessage = (e: MessageEvent<string>) => receive(JSON.parse(e.data) as PageState);
  events.onerror = () => {
    $('live').textContent = 'offline';
    $('live').className = '';
  };
}

/** Scrolls to the newest message, remembering where, so that this scroll is not taken for the reader's. */
function toBottom(box: HTMLElement): void {
  box.scrollTop = box.scrollHeight;
  scrolledTo = box.scrollTop;
}

// Kept at the newest message while the reader is there, also as images and videos load and grow.
// Scroll events come late: one of ours may arrive after an image grew, and must not count.
$('messages').addEventListener('scroll', () => {
  const box = $('messages');
  if (box.scrollTop === scrolledTo) return;
  stick = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
});
for (const name of ['load', 'loadedmetadata']) {
  $('messages').addEventListener(
    name,
    () => {
      if (stick) toBottom($('messages'));
    },
    true,
  );
}

/** The fault form shows only the fields the chosen fault uses. */
function faultFields(): void {
  const kind = field('fault-kind').value;
  $('fault-status-field').hidden = kind !== 'error';
  $('fault-delay-field').hidden = kind !== 'delay';
}
$('fault-kind').addEventListener('change', faultFields);
faultFields();

$('webhook-url').addEventListener('input', () => {
  field('webhook-url').dataset.dirty = '1';
});
$('save-webhook').addEventListener('click', () => {
  const input = field('webhook-url');
  post('webhook', { url: input.value.trim() }).then(
    () => {
      delete input.dataset.dirty;
      $('reply-status').textContent = 'Webhook saved.';
    },
    (e: unknown) => {
      $('reply-status').textContent = `Webhook not saved: ${reason(e)}`;
    },
  );
});
$('compose').addEventListener('submit', (e) => {
  e.preventDefault();
  const kind = field('reply-kind').value;
  const text = field('reply-text').value;
  if (!selected) {
    $('reply-status').textContent = 'Pick a conversation first.';
    return;
  }
  $('reply-status').textContent = 'Posting to the webhook…';
  post('reply', { user_id: selected, kind, text }).then(
    (reply) => {
      field('reply-text').value = '';
      $('reply-status').textContent =
        reply.status !== undefined
          ? `Receiver answered ${reply.status}${reply.answer ? `: ${reply.answer}` : ''}`
          : `Not delivered: ${String(reply.error)}`;
    },
    (err: unknown) => {
      $('reply-status').textContent = `Not posted: ${reason(err)}`;
    },
  );
});
$('fault-form').addEventListener('submit', (e) => {
  e.preventDefault();
  const times = field('fault-times').value.trim();
  post('faults', {
    kind: field('fault-kind').value,
    times: times === 'every' ? 'every' : Number(times),
    status: Number(field('fault-status').value),
    delayMs: Number(field('fault-delay').value),
  }).then(
    () => {
      $('fault-status-text').textContent = 'Switched on.';
    },
    (err: unknown) => {
      $('fault-status-text').textContent = reason(err);
    },
  );
});
for (const button of document.querySelectorAll('[data-action]')) {
  button.addEventListener('click', () => {
    post(button.getAttribute('data-action') ?? '').catch((err: unknown) => {
      $('fault-status-text').textContent = reason(err);
    });
  });
}
$('filter').addEventListener('input', () => {
  if (state) renderTimeline(state);
});
$('filter-kind').addEventListener('change', () => {
  if (state) renderTimeline(state);
});
connect();
