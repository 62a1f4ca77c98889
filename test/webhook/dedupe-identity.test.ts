/**
 * The dedupe key is the identity of a delivery, not of a message: an after-send callback and a
 * withdraw of the same message share its `MsgKey` but are two events, and both must reach `onEvent`.
 * A true redelivery (the same body again) is still skipped.
 */
import { describe, expect, it } from 'vitest';
import type { WebhookEvent } from '../../src/webhook/index.js';
import { eachDriver } from './drivers.js';
import { CALLBACK_BASE, envelope, eventWith, loadFixture, trackUnhandledRejections } from './support.js';

const unhandled = trackUnhandledRejections();

/** Tencent's C2C after-send sample, and the withdraw of that message (same `MsgKey`, no `MsgBody`). */
const sent = envelope(loadFixture('tencent-doc-C2C.CallbackAfterSendMsg-1.json'));
const { From_Account, To_Account, MsgKey } = loadFixture('tencent-doc-C2C.CallbackAfterSendMsg-1.json');
const withdrawn = envelope({
  CallbackCommand: 'C2C.CallbackAfterMsgWithDraw',
  From_Account,
  To_Account,
  MsgKey,
  UnreadMsgNum: 6,
});

describe('dedupe keys on the delivery, not only on MsgKey', () => {
  eachDriver(unhandled, (start) => {
    it('an after-send callback then a withdraw with the same MsgKey both reach onEvent', async () => {
      const seen: WebhookEvent[] = [];
      const driver = await start({ onEvent: (event) => void seen.push(event), dedupe: true });
      expect((await driver.send('POST', JSON.stringify(sent))).json).toEqual({ ok: true });
      expect((await driver.send('POST', JSON.stringify(withdrawn))).json).toEqual({ ok: true });
      expect(seen.map((event) => (event.data as { CallbackCommand?: string }).CallbackCommand)).toEqual([
        'C2C.CallbackAfterSendMsg',
        'C2C.CallbackAfterMsgWithDraw',
      ]);
      // Each one's redelivery is still a duplicate.
      for (const body of [sent, withdrawn]) {
        expect((await driver.send('POST', JSON.stringify(body))).json).toEqual({ ok: true, duplicate: true });
      }
      expect(seen).toHaveLength(2);
    });

    it('the same body under another CallbackCommand is another delivery', async () => {
      let calls = 0;
      const driver = await start({ onEvent: () => void calls++, dedupe: true });
      const text = [{ MsgType: 'TIMTextElem', MsgContent: { Text: 'same text' } }];
      const first = eventWith(text, 9);
      const other = eventWith(text, 9, { CallbackCommand: 'C2C.CallbackBeforeSendMsg' });
      expect(CALLBACK_BASE.CallbackCommand).not.toBe('C2C.CallbackBeforeSendMsg');
      expect((await driver.send('POST', JSON.stringify(first))).json).toEqual({ ok: true });
      expect((await driver.send('POST', JSON.stringify(other))).json).toEqual({ ok: true });
      expect((await driver.send('POST', JSON.stringify(first))).json).toEqual({ ok: true, duplicate: true });
      expect(calls).toBe(2);
    });
  });
});
