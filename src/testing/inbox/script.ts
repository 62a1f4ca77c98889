/**
 * The web inbox's script, run in the browser: it draws the state the server pushes over server-sent
 * events. Plain ES2017 with no template literals (it lives in one), and DOM nodes built with
 * textContent, so no text from a message is ever read as HTML.
 */
export const INBOX_SCRIPT = String.raw`
'use strict';
var state = null;
var selected = decodeURIComponent((location.hash.match(/user=([^&]*)/) || [])[1] || '');
var $ = function (id) { return document.getElementById(id); };

function h(tag, attrs) {
  var el = document.createElement(tag);
  for (var k in attrs || {}) {
    var v = attrs[k];
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = v;
    else if (k === 'className') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (var i = 2; i < arguments.length; i++) {
    var c = arguments[i];
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return el;
}

/** Updates a container from keyed entries, rebuilding only those whose signature changed. */
function sync(container, entries) {
  var cache = container._cache || (container._cache = new Map());
  var seen = new Set();
  entries.forEach(function (e, i) {
    var old = cache.get(e.key);
    var el;
    if (old && old.sig === e.sig) el = old.el;
    else {
      el = e.build();
      if (old) old.el.replaceWith(el);
      cache.set(e.key, { sig: e.sig, el: el });
    }
    seen.add(e.key);
    if (container.children[i] !== el) container.insertBefore(el, container.children[i] || null);
  });
  cache.forEach(function (v, k) { if (!seen.has(k)) { v.el.remove(); cache.delete(k); } });
}

function clock(ms) {
  var d = new Date(ms);
  var p = function (n, w) { return String(n).padStart(w || 2, '0'); };
  return p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()) + '.' + p(d.getMilliseconds(), 3);
}

var SAFE_LINK = /^https?:\/\//i;
var API_PREFIX = '/api/v2/public/';
var COLOR = /^#[0-9a-f]{3,8}$/i;
var SIZES = { xxs: '10px', xs: '11px', sm: '13px', md: '14px', lg: '16px', xl: '18px', xxl: '21px' };

/** A flex layout drawn as a card; null where its structure is not one this page knows. */
function flexNode(node) {
  if (!node || typeof node !== 'object') return null;
  var list = function (nodes) { return Array.isArray(nodes) ? nodes.map(flexNode).filter(Boolean) : []; };
  switch (node.type) {
    case 'carousel':
      return h.apply(null, ['div', { className: 'flex-carousel' }].concat(list(node.contents)));
    case 'bubble': {
      var card = h('div', { className: 'flex-card' });
      ['header', 'hero', 'body', 'footer'].forEach(function (part) {
        var drawn = flexNode(node[part]);
        if (drawn) card.appendChild(h('div', { className: 'flex-part ' + part }, drawn));
      });
      return card;
    }
    case 'box':
      return h.apply(null, ['div', { className: 'flex-box ' + (node.layout || 'vertical') }].concat(list(node.contents)));
    case 'text': {
      var t = h('div', { className: 'flex-text', text: String(node.text == null ? '' : node.text) });
      if (node.weight === 'bold') t.style.fontWeight = '700';
      if (COLOR.test(node.color || '')) t.style.color = node.color;
      if (SIZES[node.size]) t.style.fontSize = SIZES[node.size];
      return t;
    }
    case 'button': {
      var action = node.action || {};
      var uri = SAFE_LINK.test(action.uri || '') ? action.uri : null;
      return h('a', { className: 'flex-button', href: uri, target: '_blank', rel: 'noopener noreferrer', text: action.label || 'Button' });
    }
    case 'image':
      // Only the fake's own address is ever fetched: a layout's image is named, not loaded.
      return h('div', { className: 'external', text: 'image: ' + (node.url || '') });
    case 'separator':
      return h('hr');
    case 'spacer':
      return h('div', { style: 'height:8px' });
    default:
      return null;
  }
}

function flexItem(item) {
  var raw = Array.isArray(item.msg) ? item.msg.join('') : String(item.msg);
  try {
    var drawn = flexNode(JSON.parse(raw));
    if (drawn) return drawn;
    return h('pre', { className: 'flex-raw', text: JSON.stringify(JSON.parse(raw), null, 2) });
  } catch (e) {
    return h('pre', { className: 'flex-raw', text: raw });
  }
}

function external(label, url, own) {
  var why = own ? ' (not stored on this fake)' : ' (another host: not loaded)';
  return h('div', { className: 'external', text: label + ' at ' + url + why });
}

function itemNode(item) {
  var text = Array.isArray(item.msg) ? item.msg.join('\n') : String(item.msg == null ? '' : item.msg);
  switch (item.type) {
    case 'message':
      return h('div', { className: 'text', text: text });
    case 'image':
      return item.src ? h('img', { src: item.src, alt: 'image' }) : external('Image', text, item.ownHost);
    case 'oa_image_link': {
      var link = SAFE_LINK.test(item.link || '') ? item.link : null;
      return h('a', { className: 'image-link', href: link, target: '_blank', rel: 'noopener noreferrer', title: item.link },
        item.src ? h('img', { src: item.src, alt: 'image link' }) : external('Image', text, item.ownHost),
        h('div', { className: 'meta', text: 'opens ' + item.link }));
    }
    case 'flex':
      return flexItem(item);
    case 'video':
      if (item.transcode === 'converting') return h('div', { className: 'converting', text: 'converting…' });
      if (!item.src) return h('div', { className: 'external', text: 'video ticket ' + text + ' (unknown to this fake)' });
      return h('video', { src: item.src, controls: true, preload: 'metadata' });
    case 'audio':
      if (!item.src) return external('Audio', text, item.ownHost);
      return h('div', null, h('audio', { src: item.src, controls: true, preload: 'metadata' }),
        h('div', { className: 'meta', text: (item.audio_duration || '?') + ' s, ' + (item.audio_size || '?') + ' bytes' }));
    default:
      return h('pre', { text: JSON.stringify(item, null, 2) });
  }
}

var VIA = {
  sendGreeting: 'greeting', sendText: 'text', sendImage: 'image', sendVideo: 'video', sendAudio: 'audio',
  broadcast: 'broadcast', broadcastToGroup: 'group broadcast', broadcastToMemberSession: 'member-session broadcast'
};

function messageNode(entry) {
  if (entry.from === 'user') {
    var answer = entry.status !== undefined
      ? 'webhook answered ' + entry.status + (entry.answer ? ': ' + entry.answer : '')
      : entry.error ? 'not delivered: ' + entry.error : 'sending…';
    // Not delivered: no answer, or one the receiver refused with.
    var failed = entry.error !== undefined || entry.status >= 300;
    return h('div', { className: 'msg user' + (failed ? ' failed' : ''), 'data-type': 'reply-' + entry.kind },
      h('div', { className: 'text', text: entry.kind === 'text' ? entry.text : '[' + entry.kind + ']' }),
      h('div', { className: 'meta answer', text: clock(entry.at) + ' · ' + answer }));
  }
  var item = entry.item;
  var via = VIA[entry.endpoint] || entry.endpoint;
  if (entry.target !== 'user') via += ' (' + entry.target + ')';
  var bubble = h('div', { className: 'msg oa', 'data-type': item.type, 'data-via': entry.endpoint },
    itemNode(item),
    entry.failure ? h('div', { className: 'failure', text: 'job failed: ' + entry.failure }) : null,
    h('div', { className: 'meta', text: clock(entry.at) + ' · ' + via }));
  if (item.type !== 'message' || !item.desc) return bubble;
  // desc is the push notification's text: shown as the phone would show it, above the message.
  var wrap = h('div', { style: 'display:contents' });
  wrap.appendChild(h('div', { className: 'push' }, h('b', { text: 'Push' }), h('span', { className: 'desc', text: item.desc })));
  wrap.appendChild(bubble);
  return wrap;
}

function renderUsers() {
  var users = state.users;
  if (!selected && users.length) selected = users[0].user_id;
  var entries = users.map(function (u) {
    return {
      key: u.user_id,
      sig: u.count + (u.user_id === selected ? '*' : ''),
      build: function () {
        var li = h('li', { 'data-user': u.user_id, className: u.user_id === selected ? 'selected' : '' },
          h('span', { text: u.user_id }), h('span', { className: 'count', text: String(u.count) }));
        li.addEventListener('click', function () { select(u.user_id); });
        return li;
      }
    };
  });
  if (!entries.length) {
    entries = [{ key: '', sig: '', build: function () { return h('li', { className: 'empty', text: 'Nothing sent yet.' }); } }];
  }
  sync($('users'), entries);
}

function select(user) {
  selected = user;
  history.replaceState(null, '', '#user=' + encodeURIComponent(user));
  $('messages').replaceChildren();
  $('messages')._cache = new Map();
  $('messages')._stick = true;
  render();
}

function renderConversation() {
  var box = $('messages');
  var list = (state.conversations[selected] || []);
  $('title').textContent = selected ? selected : 'No conversation yet';
  $('title').setAttribute('data-user', selected);
  var before = box.children.length;
  sync(box, list.map(function (e) {
    return { key: e.key, sig: JSON.stringify(e), build: function () { return messageNode(e); } };
  }));
  if (box._stick !== false || box.children.length > before) toBottom(box);
}

function renderBroadcasts() {
  sync($('broadcasts'), state.broadcasts.slice().reverse().map(function (b) {
    return {
      key: b.id,
      sig: JSON.stringify(b),
      build: function () {
        var minutes = b.record && b.record.estimate_time_detail ? b.record.estimate_time_detail.total_job_time_minutes : '?';
        return h('li', { 'data-broadcast': b.id, 'data-target': b.target },
          h('details', null,
            h('summary', { text: b.target + ' → ' + b.to + ' · ' + b.items.map(function (i) { return i.type; }).join(', ') }),
            h('div', { text: 'record ' + b.id + ' · ' + (b.record ? b.record.broadcast_at : '') + ' · job ~' + minutes + ' min' }),
            h('div', { className: 'recipients', text: b.recipients.length ? 'reached: ' + b.recipients.join(', ') : 'reached nobody: no members for this ' + b.target + ' (give them with the members option, or oa mock-server --group / --member-session ID=USER,USER)' }),
            b.failure ? h('div', { className: 'failure', text: 'job failed: ' + b.failure }) : null,
            h.apply(null, ['div', { className: 'items' }].concat(b.items.map(function (i) { return h('div', { className: 'msg' }, itemNode(i)); })))));
      }
    };
  }));
}

function renderDirectory() {
  var m = state.members || {};
  var rows = [['all', 'users', m.all ? m.all : null]];
  Object.keys(m.groups || {}).forEach(function (id) { rows.push(['g:' + id, 'group ' + id, m.groups[id]]); });
  Object.keys(m.memberSessions || {}).forEach(function (id) { rows.push(['s:' + id, 'member session ' + id, m.memberSessions[id]]); });
  sync($('directory'), rows.map(function (r) {
    var text = r[1] + ': ' + (r[2] ? r[2].join(', ') : 'everyone sent to so far');
    return { key: r[0], sig: text, build: function () { return h('li', { 'data-member-list': r[0], text: text }); } };
  }));
}

function renderFaults() {
  sync($('faults'), state.faults.map(function (f, i) {
    var text = f.kind + (f.detail ? ' ' + f.detail : '') + ' · ' + (f.remaining === null ? 'every request' : f.remaining + ' left') + (f.path ? ' · ' + f.path : '');
    return { key: String(i), sig: text, build: function () { return h('li', { 'data-fault': f.kind, text: text }); } };
  }));
}

function shown(r) {
  var kind = $('filter-kind').value;
  if (kind === 'errors' && (r.routine || !(r.status >= 400 || r.outcome === 'reset' || r.outcome === 'hang'))) return false;
  if (kind === 'retries' && r.retryOf === undefined) return false;
  if (kind === 'auth' && r.kind !== 'login' && r.kind !== 'refresh') return false;
  if (kind === 'faults' && !r.fault) return false;
  var q = $('filter').value.trim().toLowerCase();
  if (!q) return true;
  return [r.method, r.path, r.status, r.code, r.kind, r.fault].join(' ').toLowerCase().indexOf(q) >= 0;
}

function timelineRow(r) {
  var tags = [];
  if (r.kind === 'login' || r.kind === 'refresh') tags.push(h('span', { className: 'tag ' + r.kind, text: r.kind === 'login' ? 'token login' : 'token refresh' }));
  if (r.retryOf !== undefined) tags.push(h('span', { className: 'tag retry', text: 'retry of #' + r.retryOf }));
  if (r.status === 429) tags.push(h('span', { className: 'tag', text: '429' }));
  if (r.routine) tags.push(h('span', { className: 'tag routine', text: 'converting: polled again', title: r.routine }));
  if (r.fault) tags.push(h('span', { className: 'tag fault', text: 'fault: ' + r.fault }));
  if (r.outcome !== 'answered' && r.outcome !== 'pending') tags.push(h('span', { className: 'tag fault', text: r.outcome }));
  // Every API path shares this prefix: the rest is what tells rows apart.
  var path = r.path.indexOf(API_PREFIX) === 0 ? r.path.slice(API_PREFIX.length) : r.path;
  var request = h('details', { title: r.path + r.query }, h('summary', { text: r.method + ' ' + path + r.query }),
    r.body ? h('pre', { text: r.body }) : null);
  var cls = r.routine ? 'routine' : (r.status >= 400 || r.outcome === 'reset' || r.outcome === 'hang' ? 'error' : '') + (r.outcome === 'pending' ? ' pending' : '');
  return h('tr', { className: cls, 'data-n': r.n, 'data-kind': r.kind, 'data-retry': r.retryOf !== undefined ? String(r.retryOf) : null, 'data-status': r.status },
    // The badges go under the request, which stays on one line however many there are.
    h('td', { text: String(r.n) }), h('td', { text: clock(r.at) }),
    h('td', { className: 'request' }, request, tags.length ? h.apply(null, ['div', { className: 'tags' }].concat(tags)) : null),
    h('td', { text: r.status === undefined ? '…' : String(r.status) }), h('td', { text: r.code || '', title: r.code || null }),
    h('td', { text: r.durationMs === undefined ? '' : String(r.durationMs) }));
}

function renderTimeline() {
  var rows = state.timeline.filter(shown).reverse();
  sync($('timeline'), rows.map(function (r) {
    return { key: String(r.n), sig: JSON.stringify(r), build: function () { return timelineRow(r); } };
  }));
  $('omitted').textContent = state.timelineOmitted ? '(' + state.timelineOmitted + ' older not shown)' : '';
}

function render() {
  if (!state) return;
  renderUsers();
  renderConversation();
  renderBroadcasts();
  renderDirectory();
  renderFaults();
  renderTimeline();
  var input = $('webhook-url');
  if (document.activeElement !== input && !input.dataset.dirty) input.value = state.webhookUrl;
}

var again = null;
function receive(next) {
  state = next;
  render();
  // A transcode ends with time, not with a request: look again while something converts.
  if (state.converting && !again) again = setTimeout(function () { again = null; refresh(); }, 500);
}

function refresh() {
  fetch('/_inbox/state').then(function (r) { return r.json(); }).then(receive).catch(function () {});
}

function post(path, body) {
  return fetch('/_inbox/' + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body || {}) })
    .then(function (r) { return r.json().then(function (j) { if (!r.ok) throw new Error(j.error || r.status); return j; }); });
}

function connect() {
  var events = new EventSource('/_inbox/events');
  events.onopen = function () { $('live').textContent = 'live'; $('live').className = 'on'; };
  events.onmessage = function (e) { receive(JSON.parse(e.data)); };
  events.onerror = function () { $('live').textContent = 'offline'; $('live').className = ''; };
}

/** Scrolls to the newest message, remembering where, so that this scroll is not taken for the reader's. */
function toBottom(box) {
  box.scrollTop = box.scrollHeight;
  box._scrolledTo = box.scrollTop;
}
// Kept at the newest message while the reader is there, also as images and videos load and grow.
// Scroll events come late: one of ours may arrive after an image grew, and must not count.
$('messages').addEventListener('scroll', function () {
  var box = $('messages');
  if (box.scrollTop === box._scrolledTo) return;
  box._stick = box.scrollHeight - box.scrollTop - box.clientHeight < 40;
});
['load', 'loadedmetadata'].forEach(function (name) {
  $('messages').addEventListener(name, function () {
    var box = $('messages');
    if (box._stick !== false) toBottom(box);
  }, true);
});
/** The fault form shows only the fields the chosen fault uses. */
function faultFields() {
  var kind = $('fault-kind').value;
  $('fault-status-field').hidden = kind !== 'error';
  $('fault-delay-field').hidden = kind !== 'delay';
}
$('fault-kind').addEventListener('change', faultFields);
faultFields();
$('webhook-url').addEventListener('input', function () { this.dataset.dirty = '1'; });
$('save-webhook').addEventListener('click', function () {
  var input = $('webhook-url');
  post('webhook', { url: input.value.trim() }).then(function () { delete input.dataset.dirty; $('reply-status').textContent = 'Webhook saved.'; },
    function (e) { $('reply-status').textContent = 'Webhook not saved: ' + e.message; });
});
$('compose').addEventListener('submit', function (e) {
  e.preventDefault();
  var kind = $('reply-kind').value;
  var text = $('reply-text').value;
  if (!selected) { $('reply-status').textContent = 'Pick a conversation first.'; return; }
  $('reply-status').textContent = 'Posting to the webhook…';
  post('reply', { user_id: selected, kind: kind, text: text }).then(function (reply) {
    $('reply-text').value = '';
    $('reply-status').textContent = reply.status !== undefined
      ? 'Receiver answered ' + reply.status + (reply.answer ? ': ' + reply.answer : '')
      : 'Not delivered: ' + reply.error;
  }, function (err) { $('reply-status').textContent = 'Not posted: ' + err.message; });
});
$('fault-form').addEventListener('submit', function (e) {
  e.preventDefault();
  var times = $('fault-times').value.trim();
  post('faults', { kind: $('fault-kind').value, times: times === 'every' ? 'every' : Number(times),
    status: Number($('fault-status').value), delayMs: Number($('fault-delay').value) })
    .then(function () { $('fault-status-text').textContent = 'Switched on.'; },
      function (err) { $('fault-status-text').textContent = err.message; });
});
document.querySelectorAll('[data-action]').forEach(function (button) {
  button.addEventListener('click', function () {
    post(button.getAttribute('data-action')).catch(function (err) { $('fault-status-text').textContent = err.message; });
  });
});
$('filter').addEventListener('input', function () { if (state) renderTimeline(); });
$('filter-kind').addEventListener('change', function () { if (state) renderTimeline(); });
connect();
`;
