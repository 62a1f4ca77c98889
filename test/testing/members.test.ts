/**
 * The members of groups, member sessions and `all`: a broadcast that names no users reaches them, and
 * `deliveries` records whom each broadcast reached.
 */
import { describe, expect, it } from 'vitest';
import { items } from '../../src/index.js';
import { DEMO_MEMBERS } from '../../src/testing/index.js';
import { mockServerFixture } from './support.js';

const GROUP = '6d1c3b52-4a7b-4c1e-9f3a-2b6d0e4c8a22';
const SESSION = '9e2f4c63-5b8c-4d2f-8a4b-3c7e1f5d9b33';
const fixture = mockServerFixture();

describe('members of groups and member sessions', () => {
  it('a group, a member-session and an `all` broadcast record the members they reached', async () => {
    const mock = await fixture.start({
      members: {
        all: ['u-1', 'u-2', 'u-3'],
        groups: { [GROUP]: ['u-1', 'u-2'] },
        memberSessions: { [SESSION]: ['u-3'] },
      },
    });
    const client = fixture.connect(mock);
    await client.broadcastToGroup({ account_provider_group_id: GROUP, items: [items.text('g')] });
    await client.broadcastToMemberSession({ member_group_broadcast_id: SESSION, items: [items.text('s')] });
    await client.broadcast({ target: 'all', items: [items.text('a')] });
    await client.broadcast({ target: 'selected', user_ids: ['u-9'], items: [items.text('x')] });
    expect(mock.deliveries.map((d) => [d.target, d.recipients])).toEqual([
      ['group', ['u-1', 'u-2']],
      ['member-session', ['u-3']],
      ['all', ['u-1', 'u-2', 'u-3']],
      ['selected', ['u-9']],
    ]);
  });

  it('members can be changed on a running fake; a group nobody configured reaches nobody', async () => {
    const mock = await fixture.start();
    const client = fixture.connect(mock);
    await client.broadcastToGroup({ account_provider_group_id: GROUP, items: [items.text('1')] });
    mock.members = { groups: { [GROUP]: ['u-7'] } };
    await client.broadcastToGroup({ account_provider_group_id: GROUP, items: [items.text('2')] });
    expect(mock.deliveries.map((d) => d.recipients)).toEqual([[], ['u-7']]);
  });

  it('DEMO_MEMBERS is a small directory of users, groups and member sessions that the API accepts', async () => {
    const mock = await fixture.start({ members: DEMO_MEMBERS });
    const client = fixture.connect(mock);
    const [group, members] = Object.entries(DEMO_MEMBERS.groups ?? {})[0] ?? [];
    const [session, sessionMembers] = Object.entries(DEMO_MEMBERS.memberSessions ?? {})[0] ?? [];
    expect(DEMO_MEMBERS.all?.length).toBeGreaterThan(1);
    await client.broadcastToGroup({ account_provider_group_id: String(group), items: [items.text('g')] });
    await client.broadcastToMemberSession({
      member_group_broadcast_id: String(session),
      items: [items.text('s')],
    });
    expect(mock.deliveries.map((d) => d.recipients)).toEqual([members, sessionMembers]);
    // The inbox shows whom each reached, and the directory.
    const state = (await (await fetch(`${mock.url}/_inbox/state`)).json()) as {
      broadcasts: { recipients: string[] }[];
      members: unknown;
    };
    expect(state.broadcasts.map((b) => b.recipients)).toEqual([members, sessionMembers]);
    expect(state.members).toEqual(DEMO_MEMBERS);
  });
});
