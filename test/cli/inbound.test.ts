/** `oa inbound`: plays the user, posting a realistic inbound event to a webhook receiver. */
import { describe, expect, it } from 'vitest';
import { createWebhookHandler, getMessageText, type WebhookEvent } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { asMessage } from '../webhook/support.js';
import { oa } from './run-oa.js';

describe.concurrent('oa inbound', () => {
  it('text, image, video and audio events reach the receiver as the OA would post them', async ({
    onTestFinished,
  }) => {
    const events: WebhookEvent[] = [];
    const receiver = await listen(createWebhookHandler({ onEvent: (event) => void events.push(event) }));
    onTestFinished(() => receiver.close());
    const to = `${receiver.url}/hook`;
    const text = await oa([
      'inbound',
      'text',
      'Is the blue jacket in stock?',
      '--to',
      to,
      '--from',
      'user-7',
    ]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      /^Posted a text message from user-7 to http:\/\/127\.0\.0\.1:\d+\/hook: the receiver answered 200/,
    );
    for (const [kind, article] of [
      ['image', 'an'],
      ['video', 'a'],
      ['audio', 'an'],
    ]) {
      const run = await oa(['inbound', kind as string, '--to', to]);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(new RegExp(`^Posted ${article} ${kind} message from user-1 to `));
    }
    expect(events.map((e) => asMessage(e).data.From_Account)).toEqual([
      'user-7',
      'user-1',
      'user-1',
      'user-1',
    ]);
    expect(getMessageText(events[0] as WebhookEvent)).toBe('Is the blue jacket in stock?');
    expect(events.map((e) => asMessage(e).data.MsgBody[0]?.MsgType)).toEqual([
      'TIMTextElem',
      'TIMImageElem',
      'TIMVideoFileElem',
      'TIMSoundElem',
    ]);
  });

  it('--json prints what was posted and the answer; a receiver that refuses it exits 1', async ({
    onTestFinished,
  }) => {
    const receiver = await listen((_req, res) => void res.writeHead(401).end('bad signature'));
    onTestFinished(() => receiver.close());
    const run = await oa(['inbound', 'text', 'hi', '--to', receiver.url, '--json']);
    expect(run.code).toBe(1);
    const printed = JSON.parse(run.stdout) as { status: number; event: unknown };
    expect(printed.status).toBe(401);
    expect(printed.event).toMatchObject({ event_type: expect.any(String) });
    expect(JSON.parse(run.stderr)).toEqual({
      error: { name: 'Error', message: 'the receiver answered 401: bad signature' },
    });
    const human = await oa(['inbound', 'text', 'hi', '--to', receiver.url]);
    expect(human.code).toBe(1);
    expect(human.stderr).toBe('oa: the receiver answered 401: bad signature\n');
  });

  it('--to is required and must be an http(s) URL', async () => {
    const missing = await oa(['inbound', 'text', 'hi']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^oa: .*--to/);
    const bad = await oa(['inbound', 'text', 'hi', '--to', 'ftp://x']);
    expect(bad.code).toBe(2);
  });
});
