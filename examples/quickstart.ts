/**
 * The smallest useful program: a client, a token, a text to a user.
 *
 *   npx tsx examples/quickstart.ts
 *
 * With OA_BASE_URL, OA_API_KEY, OA_API_SECRET and OA_USER_ID set it messages that user through your
 * OA account; otherwise it starts the fake OA server in this process and says so.
 */
import { isOAError } from 'oa-messaging';
import { connect } from './support/connect.js';

// In your code: `const client = new OAClient()` reads OA_BASE_URL, OA_API_KEY and OA_API_SECRET.
const { client, mock, userId, close } = await connect();

try {
  // There is no token code to write: the first call logs in, and the client renews the pair before
  // it expires. The event says when; the token itself is never printed (nor logged by the SDK).
  client.on('tokenRefresh', ({ kind, reason }) => {
    console.log(`token: obtained by ${kind} (reason: ${reason}); the client keeps it`);
  });

  const result = await client.sendText({
    user_id: userId,
    msg: 'Hello from oa-messaging!',
    desc: 'A first message', // shown on the push notification
  });
  console.log(`sendText to ${userId}: ${result}`);

  // Later calls reuse the same token: no second login.
  await client.sendText({ user_id: userId, msg: 'This one reused the token.' });
  console.log(`sendText to ${userId}: success (same token)`);

  if (mock) {
    const logins = mock.requests.filter((r) => r.path.endsWith('/auth/token')).length;
    console.log(`The fake received ${mock.deliveries.length} messages and ${logins} login:`);
    for (const { endpoint, user_ids, items } of mock.deliveries) {
      console.log(`  ${endpoint} to ${user_ids.join(', ')}: ${JSON.stringify(items[0]?.msg)}`);
    }
  }
} catch (error) {
  // Every SDK error is an OAError with a plain message (and never a secret). `error.deliveryUnknown`
  // means the text may have arrived: check before sending it again.
  console.error(isOAError(error) ? `${error.name}: ${error.message}` : error);
  process.exitCode = 1;
} finally {
  await close();
}
