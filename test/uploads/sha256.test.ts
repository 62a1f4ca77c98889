// The two SHA-256s behind the reuse of uploads (node:crypto on Node, Web Crypto elsewhere) give the
// digest of the whole bytes, however they are split into parts.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha256 as nodeSha256 } from '../../src/uploads/runtime-node.js';
import { sha256 as webSha256 } from '../../src/uploads/web-sha256.js';
import { media } from './support.js';

const { bytes } = media('sample.mp4');
const whole = createHash('sha256').update(bytes).digest('hex');

describe.each([
  ['node', nodeSha256],
  ['web', webSha256],
])('the %s SHA-256', (_name, sha256) => {
  it('digests bytes given whole, in parts, or none', async () => {
    const one = sha256();
    one.update(bytes);
    expect(await one.digest()).toBe(whole);
    const parts = sha256();
    for (let at = 0; at < bytes.length; at += 1000) parts.update(bytes.subarray(at, at + 1000));
    expect(await parts.digest()).toBe(whole);
    expect(await sha256().digest()).toBe(createHash('sha256').digest('hex'));
  });
});
