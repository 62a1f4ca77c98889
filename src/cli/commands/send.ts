/** `oa send text|greeting|image|audio|video`: one message to one user. */
import { Command, Option } from 'commander';
import type { WaitForTranscodeOptions } from '../../index.js';
import { type ClientFlags, withClient } from '../client.js';
import { positiveInteger, withConnectionOptions } from '../options.js';
import { runAction } from '../run-action.js';
import { showingTranscodeWait } from '../transcode-wait.js';
import { sendFileWithProgress } from '../upload-file.js';

interface UserFlags extends ClientFlags {
  user: string;
}

/** A subcommand of `send` with the recipient and the connection options. */
function sendCommand(name: string, description: string): Command {
  return withConnectionOptions(
    new Command(name)
      .description(description)
      .requiredOption('-u, --user <user_id>', 'the user who receives the message'),
  );
}

const sentLine = (kind: string, user: string, result: string) => `sent ${kind} to ${user}: ${result}`;

function textCommand(): Command {
  return sendCommand('text', 'send a text message')
    .requiredOption('-m, --msg <text>', 'the message')
    .option('--desc <text>', 'the text of the push notification')
    .action((options: UserFlags & { msg: string; desc?: string }, command: Command) =>
      runAction(command, (out) =>
        withClient(options, out, async (client) => {
          const { user, msg, desc } = options;
          const result = await client.sendText({
            user_id: user,
            msg,
            ...(desc === undefined ? {} : { desc }),
          });
          out.result(result, sentLine('text', user, result));
        }),
      ),
    );
}

function greetingCommand(): Command {
  return sendCommand('greeting', 'send the greeting configured in the OA').action(
    (options: UserFlags, command: Command) =>
      runAction(command, (out) =>
        withClient(options, out, async (client) => {
          const greeting = await client.sendGreeting({ user_id: options.user });
          out.result(greeting, `sent greeting "${greeting.title}" to ${options.user}`);
        }),
      ),
  );
}

function imageCommand(): Command {
  return sendCommand('image', 'send an image, by URL or uploaded from a file')
    .addOption(new Option('--url <image_url>', 'the image URL').conflicts('file'))
    .addOption(new Option('--file <path>', 'upload this JPG, PNG or WEBP file first').conflicts('url'))
    .option('--link <url>', 'the page that opens when the image is tapped')
    .action((options: UserFlags & { url?: string; file?: string; link?: string }, command: Command) =>
      runAction(command, async (out) => {
        if (!options.url && !options.file) command.error('error: give --url or --file', { exitCode: 2 });
        const { user, url, file, link } = options;
        const withLink = link === undefined ? {} : { link };
        await withClient(options, out, async (client) => {
          if (file) {
            const sent = await sendFileWithProgress(file, out, (fileOptions) =>
              client.sendImageFile(user, file, { ...fileOptions, ...withLink }),
            );
            out.result(sent, sentLine('image', user, sent.result));
            return;
          }
          // Without --file, --url was checked as given above.
          const result = await client.sendImage({ user_id: user, image_url: url!, ...withLink });
          out.result(result, sentLine('image', user, result));
        });
      }),
    );
}

interface AudioFlags extends UserFlags {
  file?: string;
  url?: string;
  uuid?: string;
  size?: number;
  duration?: number;
}

function audioCommand(): Command {
  const fromUpload = ['url', 'uuid', 'size', 'duration'];
  return sendCommand('audio', 'send an audio file, uploaded from a file or from an earlier upload')
    .addOption(
      new Option('--file <path>', 'upload this MP3, WAV, OGG, M4A or AAC file first').conflicts(fromUpload),
    )
    .option('--url <audio_url>', 'audio_url of an earlier upload')
    .option('--uuid <audio_uuid>', 'audio_uuid of an earlier upload')
    .option('--size <audio_size>', 'audio_size of an earlier upload', positiveInteger)
    .option('--duration <audio_duration>', 'audio_duration of an earlier upload', positiveInteger)
    .action((options: AudioFlags, command: Command) =>
      runAction(command, async (out) => {
        const { file, url, uuid, size, duration } = options;
        const given = [url, uuid, size, duration].filter((v) => v !== undefined).length;
        if (!file && given < 4) {
          command.error('error: give --file, or all of --url, --uuid, --size and --duration', {
            exitCode: 2,
          });
        }
        await withClient(options, out, async (client) => {
          if (file) {
            const sent = await sendFileWithProgress(file, out, (fileOptions) =>
              client.sendAudioFile(options.user, file, fileOptions),
            );
            out.result(sent, sentLine('audio', options.user, sent.result));
            return;
          }
          // Without --file, all four values were checked as given above.
          const result = await client.sendAudio({
            user_id: options.user,
            audio_url: url!,
            audio_uuid: uuid!,
            audio_size: size!,
            audio_duration: duration!,
          });
          out.result(result, sentLine('audio', options.user, result));
        });
      }),
    );
}

interface VideoFlags extends UserFlags {
  ticket?: string;
  file?: string;
  wait: boolean;
  waitTimeout?: number;
}

/** `--no-wait`, `--wait-timeout`, or the SDK's default wait (10 minutes). */
function transcodeWait(options: VideoFlags): WaitForTranscodeOptions | false {
  if (!options.wait) return false;
  return options.waitTimeout === undefined ? {} : { timeoutMs: options.waitTimeout };
}

function videoCommand(): Command {
  return sendCommand('video', 'send a video: upload a file, wait for its transcode, send it')
    .addOption(new Option('--ticket <ticket_id>', 'ticket_id of an earlier upload').conflicts('file'))
    .addOption(new Option('--file <path>', 'upload this video file first').conflicts('ticket'))
    .option('--no-wait', 'fail at once if the video is still converting')
    .addOption(
      new Option('--wait-timeout <ms>', 'the longest wait for the transcode (default: 10 minutes)')
        .argParser(positiveInteger)
        .conflicts('wait'),
    )
    .action((options: VideoFlags, command: Command) =>
      runAction(command, async (out) => {
        if (!options.ticket && !options.file)
          command.error('error: give --ticket or --file', { exitCode: 2 });
        const { user, ticket, file } = options;
        const waitForTranscode = transcodeWait(options);
        await withClient(options, out, async (client) => {
          if (file) {
            // The upload's progress, then the transcode wait's.
            const sent = await sendFileWithProgress(file, out, (fileOptions) =>
              showingTranscodeWait(client, out, () =>
                client.sendVideoFile(user, file, { ...fileOptions, waitForTranscode }),
              ),
            );
            out.result(sent, sentLine('video', user, sent.result));
            return;
          }
          // Without --file, --ticket was checked as given above.
          const result = await showingTranscodeWait(client, out, () =>
            client.sendVideo({ user_id: user, ticket_id: ticket! }, { waitForTranscode }),
          );
          out.result(result, sentLine('video', user, result));
        });
      }),
    );
}

/** The `send` command and its subcommands. */
export function sendCommands(): Command {
  return new Command('send')
    .description('send a message to one user')
    .addCommand(textCommand())
    .addCommand(greetingCommand())
    .addCommand(imageCommand())
    .addCommand(audioCommand())
    .addCommand(videoCommand());
}
