/**
 * The command line speaks in flags: an SDK validation issue on `user_ids` is shown as one on `--user`,
 * so that the user sees what to change in what they typed.
 */
import type { Command } from 'commander';
import type { OAValidationIssue } from '../index.js';

/** Each request field the commands fill, and the flag that fills it. */
const FLAG_OF_FIELD: Readonly<Record<string, string>> = {
  user_id: '--user',
  user_ids: '--user',
  msg: '--msg',
  desc: '--desc',
  image_url: '--url',
  link: '--link',
  ticket_id: '--ticket',
  audio_url: '--url',
  audio_uuid: '--uuid',
  audio_size: '--size',
  audio_duration: '--duration',
  target: '--target',
  items: 'the items (--text, --image, --video, --flex, --item, --items-file)',
  account_provider_group_id: '--group',
  member_group_broadcast_id: '--member-session',
  // The file argument: its issues name the file themselves.
  file: '',
};

/** Where an issue lies, as the user typed it: `--user`, `item 2 (link)`, or the SDK's path when no flag fills it. */
function flagOf(path: readonly (string | number)[]): string {
  const [field, index, ...inside] = path;
  // An item's field is named as the item's JSON spells it: `item 2 (link)`.
  if (field === 'items' && typeof index === 'number') {
    return inside.length > 0 ? `item ${index + 1} (${inside.join('.')})` : `item ${index + 1}`;
  }
  if (field === 'user_ids' && typeof index === 'number') return `--user #${index + 1}`;
  if (typeof field === 'string' && FLAG_OF_FIELD[field] !== undefined) return FLAG_OF_FIELD[field];
  // An issue of the whole request (an unknown field) names the field in its message.
  return path.join('.');
}

/** The issues of a validation error as lines naming flags. */
export function issueLines(issues: readonly OAValidationIssue[]): string[] {
  return issues.map((issue) => {
    const where = flagOf(issue.path);
    return where ? `${where}: ${issue.message}` : issue.message;
  });
}

const HELP_FLAGS = new Set(['-h', '--help']);

/**
 * Makes a command report an unknown option before a missing required one: commander checks the
 * required options first, so `oa send text --usr u` said only that `--user` was missing, never that
 * `--usr` is not an option (nor that `--user` was meant).
 */
export function unknownOptionsFirst(command: Command): void {
  if (command.commands.length > 0) return;
  const parse = command.parseOptions.bind(command);
  command.parseOptions = (argv) => {
    const parsed = parse(argv);
    const [first] = parsed.unknown;
    if (first?.startsWith('-') && !HELP_FLAGS.has(first)) {
      (command as unknown as { unknownOption(flag: string): never }).unknownOption(first);
    }
    return parsed;
  };
}
