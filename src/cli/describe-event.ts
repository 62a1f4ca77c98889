/** An inbound webhook event in a few readable lines, for `oa webhook listen`. */
import { formatIssues } from '../schemas/validate.js';
import {
  getMessageMedia,
  getMessageText,
  isMessageEvent,
  type WebhookEvent,
  type WebhookMedia,
} from '../webhook/index.js';
import { formatBytes } from './format.js';

/**
 * Where a media file is, without the signed query of its URL: that part grants access to the file and
 * has no place in a terminal's scrollback or a log. `--json` prints the event as received.
 */
function where(url: string | undefined): string {
  if (url === undefined) return 'no URL';
  try {
    return `${new URL(url).origin}/… (signed)`;
  } catch {
    return 'an unreadable URL';
  }
}

function describeMedia(media: WebhookMedia): string {
  const size = media.size === undefined ? 'size unknown' : formatBytes(media.size);
  switch (media.kind) {
    case 'image':
      return `image ${media.width ?? '?'}x${media.height ?? '?'} ${media.format ?? ''}, ${size}`;
    case 'video':
      return `video ${media.durationSeconds ?? '?'} s ${media.format ?? ''}, ${size}`;
    case 'audio':
      return `voice ${media.durationSeconds ?? '?'} s, ${size}`;
    case 'file':
      return `file ${media.fileName ?? ''}, ${size}`;
  }
}

/**
 * `message from user_1 to oa_account at 2024-05-01T10:00:00Z` and a line for its text and each media;
 * an event of another type in one line; a line naming what did not match, if anything.
 */
export function describeEvent(event: WebhookEvent): string[] {
  if (!isMessageEvent(event)) {
    return [
      `${event.event_type || '(no event_type)'} event for ${event.username ?? '?'} at ${event.timestamp ?? '?'} (not a message; --json shows it)`,
      ...describeIssues(event),
    ];
  }
  const { data } = event;
  // A missing field shows as `?`: the issues line below says what was missing.
  const account = event.username ?? '?';
  const to = data.GroupId === undefined ? account : `group ${data.GroupId} of ${account}`;
  const lines = [`message from ${data.From_Account ?? '?'} to ${to} at ${event.timestamp ?? '?'}`];
  const text = getMessageText(event);
  if (text) lines.push(`  text:  ${text}`);
  for (const media of getMessageMedia(event)) {
    lines.push(`  media: ${describeMedia(media)} at ${where(media.url)}`);
  }
  // Elements with neither text nor media (a face, a location, a custom element): named by their type.
  if (lines.length === 1)
    lines.push(`  elements: ${data.MsgBody.map((element) => String(element.MsgType)).join(', ')}`);
  return [...lines, ...describeIssues(event)];
}

/** What did not match, by path only: values may be a user's message. */
function describeIssues(event: WebhookEvent): string[] {
  if (event.issues.length === 0) return [];
  return [`  issues: ${formatIssues(event.issues)}`];
}
