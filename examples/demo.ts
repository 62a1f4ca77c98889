/**
 * `npm run demo`: every example, one after another, against the fake OA server started by each (no
 * account, no network), with a word on what each shows and a summary. Exits 1 if any example fails.
 *
 *   npx tsx examples/demo.ts
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const examples = [
  { name: 'quickstart', shows: 'a client, a token it obtains by itself, a text to a user' },
  { name: 'broadcast', shows: 'every item type to every target; JOB_BUSY waited out' },
  { name: 'media', shows: 'uploads with progress, the transcode wait, the one-call helpers' },
  { name: 'webhook-receiver', shows: 'inbound text, image, video and voice; replies; a redelivery' },
  { name: 'support-bot', shows: 'a bot: a menu, an order lookup kept in the session, a photo answered' },
];
const PER_EXAMPLE_TIMEOUT_MS = 60_000;

const root = fileURLToPath(new URL('..', import.meta.url));
// Always the fake: your account's variables are left out. A shorter transcode keeps the demo quick.
const env = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !name.startsWith('OA_') || name.startsWith('OA_DEMO_')),
);
env.OA_DEMO_TRANSCODE_MS ??= '1000';
if (process.env.OA_BASE_URL) console.log('(OA_BASE_URL is set; the demo ignores it and uses the fake.)');

interface Outcome {
  name: string;
  ok: boolean;
  seconds: number;
  why?: string;
}

/** Runs one example with tsx in a child process that shares this terminal. */
function run(name: string): Promise<Outcome> {
  const started = performance.now();
  // The repository's tsconfig maps 'oa-messaging' to src/, so the child runs from the repository root.
  const child = spawn(process.execPath, ['--import', 'tsx', `examples/${name}.ts`], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  const timer = setTimeout(() => child.kill(), PER_EXAMPLE_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const seconds = (performance.now() - started) / 1000;
      if (code === 0) resolve({ name, ok: true, seconds });
      else resolve({ name, ok: false, seconds, why: signal ? `stopped by ${signal}` : `exit code ${code}` });
    });
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ name, ok: false, seconds: 0, why: error.message });
    });
  });
}

console.log('oa-messaging demo: the SDK against a fake OA server on this machine.');
const outcomes: Outcome[] = [];
for (const [index, { name, shows }] of examples.entries()) {
  console.log(`\n[${index + 1}/${examples.length}] ${name}: ${shows}`);
  console.log(`      $ npx tsx examples/${name}.ts\n`);
  const outcome = await run(name);
  outcomes.push(outcome);
  console.log(`\n      ${outcome.ok ? 'ok' : `FAILED (${outcome.why})`}, ${outcome.seconds.toFixed(1)} s`);
}

const passed = outcomes.filter((o) => o.ok).length;
const total = outcomes.reduce((sum, o) => sum + o.seconds, 0);
console.log(`\nSummary: ${passed} of ${outcomes.length} examples passed in ${total.toFixed(1)} s`);
for (const o of outcomes) {
  console.log(`  ${o.ok ? 'ok    ' : 'FAILED'}  ${o.name.padEnd(17)} ${o.seconds.toFixed(1).padStart(5)} s`);
}
console.log('\nEach one reads top to bottom in examples/. To run one against your OA account, set');
console.log('OA_BASE_URL, OA_API_KEY, OA_API_SECRET and OA_USER_ID (the user to message: yourself).');

// The examples' fakes end with them; a fake of its own keeps running, with its web inbox.
console.log('\nTo see what your users would see, start the fake OA server and open its web inbox:');
console.log('  npx oa mock-server          (in this repository: npm run mock-server)');
console.log("then open the URL it prints in a browser: each user's conversation, the broadcasts, every");
console.log('request, replies to your webhook and faults. Point an example at it with the three OA_*');
console.log('lines it prints and OA_USER_ID=user-1, e.g. npx tsx examples/broadcast.ts.');
if (passed < outcomes.length) process.exitCode = 1;
