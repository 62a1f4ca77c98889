/** `oa upload image|video|audio FILE`: stores a file with the API, with its progress on stderr. */
import { Command } from 'commander';
import type { UploadKind } from '../../index.js';
import { type ClientFlags, withClient } from '../client.js';
import { keyValueLines } from '../format.js';
import { withConnectionOptions } from '../options.js';
import { runAction } from '../run-action.js';
import { uploadWithProgress } from '../upload-file.js';

const KINDS: Record<UploadKind, string> = {
  image: 'a JPG, PNG or WEBP image of at most 5 MB; prints its src_file and url',
  video: 'a video of at most 100 MB (MP4, AVI, MKV, MOV, WEBM, OGG, 3GP, 3G2); prints its ticket_id',
  audio: 'an MP3, WAV, OGG, M4A or AAC file of at most 100 MB; prints the values sendAudio takes',
};

function uploadKindCommand(kind: UploadKind): Command {
  return withConnectionOptions(
    new Command(kind).description(`upload ${KINDS[kind]}`).argument('<file>', 'the file to upload'),
  ).action((file: string, options: ClientFlags, command: Command) =>
    runAction(command, (out) =>
      withClient(options, out, async (client) => {
        const result = await uploadWithProgress(client, kind, file, out);
        out.result(result, keyValueLines(result));
      }),
    ),
  );
}

/** The `upload` command and its subcommands. */
export function uploadCommands(): Command {
  const upload = new Command('upload').description(
    'upload a file (progress on stderr: a bar on a terminal, plain lines otherwise)',
  );
  for (const kind of ['image', 'video', 'audio'] as const) upload.addCommand(uploadKindCommand(kind));
  return upload;
}
