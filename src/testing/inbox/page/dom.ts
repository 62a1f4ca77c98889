/** The page's DOM helpers: elements built with textContent, so no text is ever read as HTML. */

/** Attributes of {@link h}: `text` is the text content, `className` the class; null, undefined and false are left out. */
type Attrs = Record<string, string | number | boolean | null | undefined>;
/** Children of {@link h}: strings become text nodes; null, undefined and false are left out. */
type Child = Node | string | null | undefined | false;

/** The element of the page with this id. */
export function $(id: string): HTMLElement {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el;
}

/** The input or select of the page with this id. */
export function field(id: string): HTMLInputElement | HTMLSelectElement {
  const el = $(id);
  if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement) return el;
  throw new Error(`#${id} is not a field`);
}

/** A new element with these attributes and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') el.textContent = String(v);
    else if (k === 'className') el.className = String(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return el;
}

/** One keyed entry of {@link sync}: rebuilt only when its signature changes. */
export interface Entry {
  key: string;
  sig: string;
  build(): Element;
}

const caches = new WeakMap<Element, Map<string, { sig: string; el: Element }>>();

/** Updates a container from keyed entries, rebuilding only those whose signature changed. */
export function sync(container: Element, entries: readonly Entry[]): void {
  let cache = caches.get(container);
  if (!cache) {
    cache = new Map();
    caches.set(container, cache);
  }
  const seen = new Set<string>();
  entries.forEach((e, i) => {
    const old = cache.get(e.key);
    let el: Element;
    if (old && old.sig === e.sig) el = old.el;
    else {
      el = e.build();
      if (old) old.el.replaceWith(el);
      cache.set(e.key, { sig: e.sig, el });
    }
    seen.add(e.key);
    if (container.children[i] !== el) container.insertBefore(el, container.children[i] ?? null);
  });
  cache.forEach((v, k) => {
    if (!seen.has(k)) {
      v.el.remove();
      cache.delete(k);
    }
  });
}

/** Forgets what {@link sync} drew in a container (emptied by the caller). */
export function forget(container: Element): void {
  caches.delete(container);
}

/** A time of day to the millisecond: `HH:MM:SS.mmm`. */
export function clock(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}
