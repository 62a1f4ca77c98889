// Run as a child process by ready-videos.test.ts: another process of the same api key, sharing Redis,
// that sends one video to one user (waiting out its transcode) and prints one JSON line.
import { OAClient } from '../../src/index.js';
import { createRedisCoordination } from '../../src/redis/index.js';

export interface SendVideoConfig {
  redisUrl: string;
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  user_id: string;
  ticket_id: string;
}

const config = JSON.parse(process.argv[2] ?? '{}') as SendVideoConfig;
const coordination = createRedisCoordination({ url: config.redisUrl });
const client = new OAClient({
  baseUrl: config.baseUrl,
  apiKey: config.apiKey,
  apiSecret: config.apiSecret,
  coordination,
});
try {
  const result = await client.sendVideo({ user_id: config.user_id, ticket_id: config.ticket_id });
  process.stdout.write(`${JSON.stringify({ result })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ error: String(error) })}\n`);
  process.exitCode = 1;
} finally {
  await client.close();
  await coordination.close();
}
