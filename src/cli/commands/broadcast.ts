/** `oa broadcast`: up to five items to all users, selected users, one user, a group or a member session. */
import { Command, Option } from 'commander';
import type {
  BroadcastOptions,
  BroadcastParams,
  BroadcastRecord,
  MessageItem,
  OAClient,
} from '../../index.js';
import { ItemCollector, readItemsFile } from '../broadcast-items.js';
import { broadcastWithVideos, checkVideoWait, type VideoWaitFlags } from '../broadcast-videos.js';
import { type ClientFlags, withClient } from '../client.js';
import { UsageError } from '../errors.js';
import { collect, positiveInteger, withConnectionOptions } from '../options.js';
import { runAction } from '../run-action.js';

interface BroadcastFlags extends ClientFlags, VideoWaitFlags {
  target?: 'all' | 'selected' | 'single';
  user?: string[];
  group?: string;
  memberSession?: string;
  itemsFile?: string;
}

const ITEMS_HELP = `
Items, in the order given (one to five):
  --text "Spring sale" --desc "Push text"       a text, with an optional push-notification text
  --image https://cdn.example.com/a.png          an image; add --link URL to open a page when tapped
  --video FILE|TICKET_ID                         a video: a file, uploaded first, or the ticket_id of an
                                                 upload (see: oa upload video)
  --flex '{"type":"bubble"}'                     a flex layout (JSON)
  --item '{"type":"audio",...}'                  any item as JSON, e.g. an audio item
  --items-file items.json                        a JSON array of items (or { "items": [...] }), placed first;
                                                 --items-file - reads it from standard input

Videos: the API accepts a broadcast of a video that is still converting, and its job then fails;
it cannot be asked whether a video is ready, only sent it. So oa first sends each video to
--probe-user (a user of yours, e.g. a test account), waiting while it converts, then broadcasts.
--no-wait broadcasts at once.

Examples:
  oa broadcast --target all --text "Spring sale starts today"
  oa broadcast --target selected --user u1 --user u2 --image https://cdn.example.com/a.png --link https://shop.example.com
  oa broadcast --group 0b7e4a52-2a8e-4b6e-9d55-3f1b7c1e9a10 --items-file items.json
  oa broadcast --target all --text "New clip" --video clip.mp4 --probe-user my-test-account`;

/** Sends the broadcast the flags describe. */
function send(
  client: OAClient,
  flags: BroadcastFlags,
  items: MessageItem[],
  options: BroadcastOptions,
): Promise<BroadcastRecord> {
  if (flags.group !== undefined) {
    return client.broadcastToGroup({ account_provider_group_id: flags.group, items }, options);
  }
  if (flags.memberSession !== undefined) {
    const params = { member_group_broadcast_id: flags.memberSession, items };
    return client.broadcastToMemberSession(params, options);
  }
  // Passed as typed, users or not: the SDK refuses `user_ids` for `all` and requires them otherwise, with
  // a message that names the rule (exit 2).
  const params = { target: flags.target, items, ...(flags.user ? { user_ids: flags.user } : {}) };
  return client.broadcast(params as BroadcastParams, options);
}

function describe(record: BroadcastRecord): string[] {
  const types = record.data.map((item) => item.type).join(', ');
  return [
    `broadcast ${record.id}: ${record.data.length} item${record.data.length === 1 ? '' : 's'} (${types})`,
    `estimated job time: ${record.estimate_time_detail.total_job_time_minutes} min`,
  ];
}

/** The `broadcast` command. */
export function broadcastCommand(): Command {
  const collector = new ItemCollector();
  const command = new Command('broadcast')
    .description(
      'broadcast up to five items to all users, selected users, one user, a group or a member session',
    )
    .addOption(
      new Option('--target <target>', 'who receives it')
        .choices(['all', 'selected', 'single'])
        .conflicts(['group', 'memberSession']),
    )
    .option('--user <user_id>', 'a recipient of a selected or single broadcast (repeat for more)', collect)
    .addOption(
      new Option('--group <account_provider_group_id>', 'broadcast to every member of this group').conflicts([
        'memberSession',
        'user',
      ]),
    )
    .addOption(
      new Option(
        '--member-session <member_group_broadcast_id>',
        'broadcast to this member-group session',
      ).conflicts('user'),
    )
    .option('--text <msg>', 'add a text item', collector.text)
    .option('--desc <text>', 'the push-notification text of the text item before it', collector.desc)
    .option('--image <url>', 'add an image item', collector.image)
    .option('--link <url>', 'make the image item before it open this page when tapped', collector.link)
    .option('--video <file|ticket_id>', 'add a video item: a file to upload, or a ticket_id', collector.video)
    .option('--flex <json>', 'add a flex item', collector.flex)
    .option('--item <json>', 'add an item given as JSON', collector.item)
    .option(
      '--probe-user <user_id>',
      'a user of yours who receives each video first, once converted; the broadcast waits for it',
    )
    .option('--no-wait', 'broadcast at once, even a video still converting (its job would then fail)')
    .addOption(
      new Option('--wait-timeout <ms>', 'the longest wait for a video to convert (default: 10 minutes)')
        .argParser(positiveInteger)
        .conflicts('wait'),
    )
    .option(
      '--items-file <path>',
      'read items from a JSON file, or from standard input for - (placed before the item flags)',
    )
    .addHelpText('after', ITEMS_HELP);
  return withConnectionOptions(command).action((options: BroadcastFlags, cmd: Command) =>
    runAction(cmd, async (out) => {
      const { target, group, memberSession } = options;
      if (target === undefined && group === undefined && memberSession === undefined) {
        cmd.error('error: give --target, --group or --member-session', { exitCode: 2 });
      }
      const users = options.user?.length ?? 0;
      // The recipients, in flags: the SDK would name its own field (`user_ids`) instead.
      if ((target === 'selected' || target === 'single') && users === 0) {
        throw new UsageError(
          `--target ${target} needs ${target === 'single' ? 'one' : 'at least one'} --user`,
        );
      }
      if (target === 'single' && users > 1) throw new UsageError('--target single takes one --user');
      if (target === 'all' && users > 0) {
        throw new UsageError('--target all goes to every user: drop --user, or use --target selected');
      }
      const fromFile = options.itemsFile === undefined ? [] : readItemsFile(options.itemsFile);
      const items = [...fromFile, ...(collector.items as MessageItem[])];
      if (items.length === 0) cmd.error('error: give at least one item (see --help)', { exitCode: 2 });
      checkVideoWait(items, options);
      await withClient(options, out, async (client) => {
        const record = await broadcastWithVideos(client, out, items, collector.videoFiles, options, (o) =>
          send(client, options, items, o),
        );
        out.result(record, describe(record));
      });
    }),
  );
}
