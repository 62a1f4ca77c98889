/** Who the broadcasts that name no users reach, and the small directory the fake can start with. */
import type { Delivery, FakeMembers } from './types.js';

/**
 * A small demo directory: five users, two groups and a member-group session, so that every broadcast
 * target reaches someone on a first try (`oa mock-server` starts with it).
 */
export const DEMO_MEMBERS: Readonly<FakeMembers> = Object.freeze({
  all: ['user-1', 'user-2', 'user-3', 'user-4', 'user-5'],
  groups: {
    // "VIP customers"
    '6d1c3b52-4a7b-4c1e-9f3a-2b6d0e4c8a22': ['user-1', 'user-2'],
    // "Newsletter"
    '7a2d4c63-5b8c-4d2f-8a4b-3c7e1f5d9b44': ['user-2', 'user-3', 'user-4'],
  },
  memberSessions: {
    '9e2f4c63-5b8c-4d2f-8a4b-3c7e1f5d9b33': ['user-4', 'user-5'],
  },
});

/**
 * The members a broadcast reaches when it names no users. `seen`: the users delivered to so far, the
 * recipients of `all` when neither `members.all` nor `knownUsers` says.
 */
export function recipientsOf(
  delivery: Pick<Delivery, 'target' | 'user_ids' | 'account_provider_group_id' | 'member_group_broadcast_id'>,
  members: FakeMembers,
  knownUsers: Set<string> | undefined,
  seen: () => string[],
): string[] {
  switch (delivery.target) {
    case 'all':
      return [...(members.all ?? knownUsers ?? seen())];
    case 'group':
      return [...(members.groups?.[delivery.account_provider_group_id ?? ''] ?? [])];
    case 'member-session':
      return [...(members.memberSessions?.[delivery.member_group_broadcast_id ?? ''] ?? [])];
    default:
      return [...delivery.user_ids];
  }
}

/** Every user named in a delivery so far, once each, in order. */
export function usersSeen(deliveries: readonly Delivery[]): string[] {
  return [...new Set(deliveries.flatMap((d) => d.recipients))];
}
