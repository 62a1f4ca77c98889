/**
 * The key layout's one rule for a Redis Cluster: which part of a key is its hash tag. Every script's
 * keys must share a slot (else the cluster refuses it with `CROSSSLOT`), and different queues, accounts
 * and senders should land on different slots, so that a cluster spreads them over its masters.
 */

/**
 * `id` as a hash tag, `{id}`: keys that hold the same tag (the text between their first `{` and the
 * next `}`) are in one slot; keys with different tags spread over the cluster. Put it before any other
 * `{` of the key. `id` should not contain `}` (the tag would end there: still one slot for all keys of
 * that id, but shared with other ids) nor be empty (`{}` is no tag: the whole key is hashed).
 *
 * @example `${prefix}limit:${hashTag(account)}:general` and `...:upload` are in one slot.
 */
export function hashTag(id: string): string {
  return `{${id}}`;
}

/** Whether `name` holds a hash tag already (a `{`, then a non-empty text, then `}`). */
function hasHashTag(name: string): boolean {
  const open = name.indexOf('{');
  if (open === -1) return false;
  const close = name.indexOf('}', open + 1);
  return close > open + 1;
}

/**
 * The BullMQ queue name under which the queue `name` is kept: on a Redis Cluster `{name}` (its keys
 * `bull:{name}:...`, one slot per queue, as BullMQ requires), unless `name` holds a hash tag already;
 * on a single Redis `name` itself, as it always was (`bull:name:...`), so that no stored job is left
 * under an older name.
 */
export function queueKeyName(name: string, cluster: boolean): string {
  return cluster && !hasHashTag(name) ? hashTag(name) : name;
}
