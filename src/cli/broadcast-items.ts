/**
 * The items of `oa broadcast`, from flags in the order they were given, or from a JSON file. They are
 * only shaped here: the SDK validates every item before the broadcast is sent (exit 2 if one is wrong).
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { items, type MessageItem } from '../index.js';
import { isVideoFile } from './broadcast-videos.js';
import { UsageError } from './errors.js';

/**
 * Collects item flags as commander parses them, so that `--text a --image b --text c` keeps its order.
 * `--desc` and `--link` refine the item just before them.
 */
export class ItemCollector {
  readonly items: Record<string, unknown>[] = [];
  /** The `--video` items given as a file to upload first: item -> path. */
  readonly videoFiles = new Map<object, string>();

  /** The item just before a refining flag, which must be of `type`. */
  #last(type: string, flag: string): Record<string, unknown> {
    const last = this.items.at(-1);
    if (last?.type !== type) throw new InvalidArgumentError(`It must come right after a ${flag}.`);
    return last;
  }

  // Arrow functions: commander calls each as a bare option parser.
  readonly text = (msg: string): void => {
    this.items.push(items.text(msg));
  };
  readonly desc = (desc: string): void => {
    this.#last('message', '--text').desc = desc;
  };
  readonly image = (url: string): void => {
    this.items.push(items.image(url));
  };
  readonly link = (link: string): void => {
    const image = this.#last('image', '--image');
    this.items[this.items.length - 1] = items.imageLink(String(image.msg), link);
  };
  readonly video = (ticketOrFile: string): void => {
    const item = items.video(ticketOrFile);
    this.items.push(item);
    if (isVideoFile(ticketOrFile)) this.videoFiles.set(item, ticketOrFile);
  };
  readonly flex = (layout: string): void => {
    this.items.push(items.flex(layout));
  };
  readonly item = (json: string): void => {
    let value: unknown;
    try {
      value = JSON.parse(json);
    } catch {
      throw new InvalidArgumentError('It is not JSON.');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new InvalidArgumentError('It is not a JSON object.');
    }
    this.items.push(value as Record<string, unknown>);
  };
}

/**
 * The items of a JSON file, or of standard input for `-`: an array of items, or an object with an
 * `items` array.
 */
export function readItemsFile(path: string): MessageItem[] {
  const name = path === '-' ? 'standard input' : path;
  let value: unknown;
  try {
    // File descriptor 0 is read to its end: `oa broadcast --items-file - < items.json`, or from a pipe.
    value = JSON.parse(readFileSync(path === '-' ? 0 : path, 'utf8'));
  } catch (error) {
    const reason = error instanceof SyntaxError ? 'not valid JSON' : (error as NodeJS.ErrnoException).code;
    throw new UsageError(`cannot read the items file ${name} (${reason ?? 'unreadable'})`);
  }
  const list = Array.isArray(value)
    ? value
    : typeof value === 'object' && value !== null && Array.isArray((value as { items?: unknown }).items)
      ? (value as { items: unknown[] }).items
      : undefined;
  if (!list)
    throw new UsageError(`the items file ${name} must hold an array of items, or { "items": [...] }`);
  // The SDK checks each item; a wrong one fails with an OAValidationError naming it.
  return list as MessageItem[];
}
