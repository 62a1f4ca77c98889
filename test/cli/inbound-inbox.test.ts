/**
 * `oa inbound` against the fake: the message it posts shows in the web inbox conversation of the user
 * who wrote it, before the bot's reply to it; it writes as the demo's first user, `user-1`, by default.
 */
import { describe, expect, it, type OnTestFinishedHandler } from 'vitest';
import { OAClient } from '../../src/index.js';
import type { MockServer } from '../../src/testing/index.js';
import { createWebhookHandler, getMessageText, isMessageEvent } from '../../src/webhook/index.js';
import { listen } from '../helpers/listen.js';
import { fakeServer, oa } from './run-oa.js';

interface Entry {
  from: 'user' | 'oa';
  text?: string;
  status?: number;
  item?: { msg?: string };
}

/** A receiver that answers each text through the fake, as a bot would. */
async function echoBot(mock: MockServer, onTestFinished: (fn: OnTestFinishedHandler) => void) {
  const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
  onTestFinished(() => client.close());
  const receiver = await listen(
    createWebhookHandler({
      onEvent: async (event) => {
        if (!isMessageEvent(event) || !event.data.From_Account) return;
        await client.sendText({ user_id: event.data.From_Account, msg: `You said ${getMessageText(event)}` });
      },
    }),
  );
  onTestFinished(() => receiver.close());
  return `${receiver.url}/oa/webhook`;
}

async function conversation(mock: MockServer, user: string): Promise<Entry[]> {
  const res = await fetch(`${mock.url}/_inbox/state`, { signal: AbortSignal.timeout(5_000) });
  const state = (await res.json()) as { conversations: Record<string, Entry[]> };
  return state.conversations[user] ?? [];
}

describe.concurrent('oa inbound and the web inbox', { timeout: 60_000 }, () => {
  it('with OA_BASE_URL at the fake, the message shows in user-1 conversation, before the reply', async ({
    onTestFinished,
  }) => {
    const { mock, env } = await fakeServer(onTestFinished);
    const to = await echoBot(mock, onTestFinished);
    const run = await oa(['inbound', 'text', 'Is it in stock?', '--to', to], { env });
    expect([run.code, run.stderr]).toEqual([0, '']);
    expect(run.stdout).toMatch(/^Posted a text message from user-1 to /);
    expect(mock.deliveries.map((d) => d.user_ids)).toEqual([['user-1']]);
    const entries = await conversation(mock, 'user-1');
    expect(entries.map((e) => [e.from, e.from === 'user' ? e.text : e.item?.msg])).toEqual([
      ['user', 'Is it in stock?'],
      ['oa', 'You said Is it in stock?'],
    ]);
    expect(entries[0]?.status).toBe(200);
  });

  it('--mock names the fake; an image from another user shows in that user conversation', async ({
    onTestFinished,
  }) => {
    const { mock } = await fakeServer(onTestFinished);
    const to = await echoBot(mock, onTestFinished);
    const run = await oa(['inbound', 'image', '--to', to, '--from', 'user-3', '--mock', mock.url]);
    expect(run.code).toBe(0);
    const entries = await conversation(mock, 'user-3');
    expect(entries.map((e) => [e.from, (e as { kind?: string }).kind ?? e.item?.msg])).toEqual([
      ['user', 'image'],
      ['oa', 'You said '],
    ]);
  });

  it('without a fake to tell, the message is still posted, and nothing else is said', async ({
    onTestFinished,
  }) => {
    const { mock } = await fakeServer(onTestFinished);
    const to = await echoBot(mock, onTestFinished);
    const run = await oa(['inbound', 'text', 'hi', '--to', to]);
    expect([run.code, run.stderr]).toEqual([0, '']);
  });
});
