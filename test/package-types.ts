/**
 * Consumer projects of the packed package's types, each compiled with `skipLibCheck: false` (the
 * package's declarations checked too) by TypeScript 5.9 and by TypeScript 7 (`npm install typescript`
 * gives 7.x; it ships a native compiler): a Worker project as Cloudflare's template sets one up (lib
 * ES2022 and WebWorker, no @types/node) using the root and webhook entries, and a Node project that
 * keeps Node's own types: a Readable to upload, node:http's request and response, undici's Agent.
 */
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

/** The two compilers: the repository's TypeScript 5.9 and TypeScript 7 (devDependency `typescript7`). */
export const COMPILERS = {
  'TypeScript 5.9': join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
  'TypeScript 7': join(root, 'node_modules', 'typescript7', 'bin', 'tsc'),
} as const;

/** A Worker's tsconfig: no Node types, lib ES2022 and WebWorker, bundler resolution, nothing skipped. */
export const WORKER_TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'es2022',
    lib: ['es2022', 'webworker'],
    module: 'es2022',
    moduleResolution: 'bundler',
    types: [],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    noEmit: true,
  },
  include: ['index.ts'],
});

/** A Worker using the client and the fetch handler; a wrong use must not compile. */
export const WORKER_SOURCE = `import { OAClient, type FileSource, type OAClientOptions } from 'oa-messaging';
import { createFetchWebhookHandler, getMessageText, isMessageEvent, type FetchWebhookHandler } from 'oa-messaging/webhook';

interface Env { OA_BASE_URL: string; OA_API_KEY: string; OA_API_SECRET: string }
const stream: FileSource = new ReadableStream<Uint8Array>();
// @ts-expect-error: a number is no file
const wrong: FileSource = 5;
let handler: FetchWebhookHandler | undefined;
export default {
  async fetch(request: Request, env: Env, ctx: { waitUntil(promise: Promise<unknown>): void }): Promise<Response> {
    const options: OAClientOptions = { baseUrl: env.OA_BASE_URL, apiKey: env.OA_API_KEY, apiSecret: env.OA_API_SECRET };
    const client = new OAClient(options);
    const dispose: () => Promise<void> = () => client[Symbol.asyncDispose]();
    handler ??= createFetchWebhookHandler({
      onEvent: async (event, context) => {
        const from: Request = context.request;
        if (!isMessageEvent(event) || event.data.From_Account === undefined) return;
        const text = getMessageText(event);
        if (text) await client.sendText({ user_id: event.data.From_Account, msg: from.url + text });
        await client.uploadImage({ data: stream, filename: 'a.png' });
      },
    });
    void wrong; void dispose;
    return handler(request, ctx);
  },
};
`;

/** A Node project's tsconfig (nodenext, @types/node), nothing skipped. */
export const NODE_TSCONFIG = JSON.stringify({
  compilerOptions: {
    target: 'es2022',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    types: ['node'],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    noEmit: true,
  },
  include: ['index.ts'],
});

/** Node's own types where the package takes or gives Node objects. */
export const NODE_SOURCE = `import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { Agent } from 'undici';
import { OAClient, type FileSource } from 'oa-messaging';
import { createWebhookHandler, type NodeWebhookHandler } from 'oa-messaging/webhook';

const client = new OAClient({ apiKey: 'k', apiSecret: 's', dispatcher: new Agent() });
const file: FileSource = createReadStream('a.png');
const readable: FileSource = Readable.from([new Uint8Array(1)]);
await client.uploadImage({ data: file });
await client.uploadImage({ data: readable, filename: 'b.png' });
await using disposed = new OAClient({ apiKey: 'k', apiSecret: 's' });
const handler: NodeWebhookHandler = createWebhookHandler({
  verify: (request: IncomingMessage) => request.socket.remoteAddress !== undefined,
  onEvent: (event, context) => {
    const request: IncomingMessage = context.request;
    void request.headers['user-agent'];
  },
});
const listener: (req: IncomingMessage, res: ServerResponse) => void = handler;
createServer(handler);
// @ts-expect-error: the request is node:http's, with its own types
const address: number = (null as unknown as Parameters<NodeWebhookHandler>[0]).socket.remoteAddress;
void listener; void address; void disposed;
`;
