/**
 * The repeat check of a `user_ids` list on Cloudflare's workerd (the `workerd` condition, which only
 * workerd's bundlers set): a Set, the same answer as the hashed check, slower on a long list, where the
 * bundle's size counts for more: the hashed check's code is left out of the bundle.
 */

/** Whether no id in `ids` is repeated. */
export function allDistinct(ids: readonly string[]): boolean {
  return new Set(ids).size === ids.length;
}
