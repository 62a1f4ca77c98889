/**
 * `oa-messaging/testing`: a stateful fake of the OA Public Messaging API for your tests, as a real HTTP
 * server on loopback ({@link createMockServer}) or as msw handlers (`oa-messaging/testing/msw`), and a
 * helper that posts realistic inbound events to a webhook receiver ({@link sendInboundMessage}).
 *
 * @example
 * ```ts
 * import { createMockServer } from 'oa-messaging/testing';
 * const mock = await createMockServer();
 * const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
 * ```
 *
 * @module oa-messaging/testing
 */
export { DEFAULT_GREETING } from './answers.js';
export { createFakeOA, FakeOA } from './fake.js';
export {
  buildInboundEvent,
  type InboundDelivery,
  type InboundMessage,
  type InboundMessageOptions,
  sendInboundMessage,
} from './inbound.js';
export type { InboxMembers } from './inbox/state.js';
export { DEMO_MEMBERS } from './members.js';
export {
  createMockServer,
  type MockSayOptions,
  MockServer,
  type MockServerConnections,
  type MockServerOptions,
} from './server.js';
export type { FakeTokenPair } from './tokens.js';
export {
  type Delivery,
  type DeliveryEndpoint,
  type FakeAccountOptions,
  type FakeMembers,
  type FakeOAOptions,
  type FakeOutcome,
  type FakeRequest,
  type Fault,
  type FaultKind,
  type FaultOptions,
  type GreetingRecord,
  type InjectedFault,
  type RateLimitOptions,
  type RateWindowOptions,
  type RecordedPart,
  type RecordedRequest,
  type StoredUpload,
  TEST_API_KEY,
  TEST_API_SECRET,
  TEST_USERNAME,
} from './types.js';
