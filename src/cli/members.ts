/**
 * `oa mock-server`'s directory of users, groups and member sessions: the demo one, or one from flags
 * (`--user`, `--group ID=USER,USER`, `--member-session ID=USER,USER`) or a JSON file (`--members`).
 */
import { readFileSync } from 'node:fs';
import { InvalidArgumentError } from 'commander';
import { DEMO_MEMBERS, type FakeMembers } from '../testing/index.js';
import { UsageError } from './errors.js';

/** The directory flags as parsed. */
export interface MembersFlags {
  members?: string;
  user?: string[];
  group?: [string, string[]][];
  memberSession?: [string, string[]][];
  demo: boolean;
}

/** Parses and collects a repeatable `ID=USER,USER` value (`--group`, `--member-session`). */
export function idWithUsers(value: string, previous: [string, string[]][] | undefined): [string, string[]][] {
  const match = /^([^=\s]+)=(.+)$/.exec(value.trim());
  const users = match?.[2]?.split(',').map((user) => user.trim()) ?? [];
  if (!match?.[1] || users.some((user) => user === '')) {
    throw new InvalidArgumentError('Expected ID=USER,USER (the id, "=", then user ids separated by commas).');
  }
  return [...(previous ?? []), [match[1], users]];
}

const isUserList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((user) => typeof user === 'string' && user !== '');

/** The directory of a `--members` file, checked field by field. */
function readMembersFile(file: string): FakeMembers {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--members ${file}: ${code ? `cannot read it (${code})` : 'not JSON'}`);
  }
  const fix = 'expected { "all": [...], "groups": { "ID": [...] }, "memberSessions": { "ID": [...] } }';
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`--members ${file}: ${fix}`);
  }
  const { all, groups, memberSessions, ...rest } = parsed as Record<string, unknown>;
  const [unknown] = Object.keys(rest);
  if (unknown !== undefined) throw new UsageError(`--members ${file}: "${unknown}" is not a field: ${fix}`);
  if (all !== undefined && !isUserList(all)) {
    throw new UsageError(`--members ${file}: all: must be a list of user ids (strings)`);
  }
  const members: FakeMembers = all === undefined ? {} : { all };
  for (const [field, value] of [
    ['groups', groups],
    ['memberSessions', memberSessions],
  ] as const) {
    if (value === undefined) continue;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new UsageError(`--members ${file}: ${field}: must map each id to a list of user ids`);
    }
    for (const [id, users] of Object.entries(value)) {
      if (!isUserList(users)) {
        throw new UsageError(`--members ${file}: ${field}.${id}: must be a list of user ids (strings)`);
      }
    }
    members[field] = value as Record<string, string[]>;
  }
  return members;
}

/** The directory the flags ask for: a file's, the flags', the demo one, or (with `--no-demo`) none. */
export function membersFrom(flags: MembersFlags): FakeMembers {
  const given = flags.user ?? flags.group ?? flags.memberSession;
  if (flags.members === undefined && given === undefined) {
    return flags.demo ? (structuredClone(DEMO_MEMBERS) as FakeMembers) : {};
  }
  const members = flags.members === undefined ? {} : readMembersFile(flags.members);
  if (flags.user) members.all = [...(members.all ?? []), ...flags.user];
  if (flags.group) members.groups = { ...members.groups, ...Object.fromEntries(flags.group) };
  if (flags.memberSession) {
    members.memberSessions = { ...members.memberSessions, ...Object.fromEntries(flags.memberSession) };
  }
  return members;
}

/** The directory as lines for the terminal. */
export function membersLines(members: FakeMembers): string[] {
  const lines = [`  users: ${members.all?.length ? members.all.join(', ') : '(every user sent to so far)'}`];
  for (const [id, users] of Object.entries(members.groups ?? {}))
    lines.push(`  group ${id}: ${users.join(', ')}`);
  for (const [id, users] of Object.entries(members.memberSessions ?? {})) {
    lines.push(`  member session ${id}: ${users.join(', ')}`);
  }
  return lines;
}
