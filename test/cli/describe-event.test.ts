import { describe, expect, it } from 'vitest';
import { describeEvent } from '../../src/cli/describe-event.js';
import { parseWebhookEvent } from '../../src/webhook/index.js';
import { envelope, eventWith, loadFixture } from '../webhook/support.js';

describe('describeEvent (oa webhook listen)', () => {
  it('names the group of a group message', () => {
    const event = parseWebhookEvent(envelope(loadFixture('tencent-doc-Group.CallbackAfterSendMsg-1.json')));
    expect(describeEvent(event)).toEqual([
      'message from jared to group @TGS#2J4SZEAEL of oa_shop at 2019-05-10T09:38:46.000Z',
      '  text:  red packet',
    ]);
  });

  it('describes an event of another type in one line, and what did not match by path only', () => {
    const event = parseWebhookEvent({ event_type: 'follow', username: 'oa_shop', data: { secret: 'x' } });
    expect(describeEvent(event)).toEqual([
      'follow event for oa_shop at ? (not a message; --json shows it)',
      '  issues: timestamp: missing',
    ]);
  });

  it('lists an invalid element by its marked type, without its content', () => {
    const event = parseWebhookEvent(eventWith([{ MsgType: 'TIMTextElem', MsgContent: { Text: 5 } }]));
    const lines = describeEvent(event);
    expect(lines[1]).toBe('  elements: TIMTextElem (invalid)');
    expect(lines[2]).toMatch(/^ {2}issues: data\.MsgBody\[0\]\.MsgContent\.Text: /);
    expect(lines[2]).not.toMatch(/\b5\b/);
  });
});
