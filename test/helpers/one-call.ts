// Run as a child process: one call, then either end the script or close the client. The parent checks
// that the process exits by itself with no stray timer or socket.
import { OAClient } from '../../src/index.js';

const [baseUrl, mode] = process.argv.slice(2);
const client = new OAClient({ baseUrl: baseUrl ?? '', apiKey: 'key-123456', apiSecret: 'secret-abcdef' });
console.log(await client.sendText({ user_id: 'u1', msg: 'one call' }));
if (mode === 'close') {
  await client.close();
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  const sockets = handles.filter(
    (h) => h?.constructor?.name === 'Socket' && !(h as { _isStdio?: boolean })._isStdio,
  );
  console.log(`open sockets after close: ${sockets.length}`);
  if (sockets.length > 0) process.exitCode = 3;
}
