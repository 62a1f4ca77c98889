/**
 * The declarations the README's blocks are compiled with: what the fragments use without defining it,
 * and the little of Deno, Bun and Cloudflare Workers that the runtime recipes use.
 */
export const README_AMBIENT = `import type { IncomingMessage, ServerResponse } from 'node:http';
import type * as oa from 'oa-messaging';
import type { WebhookEvent } from 'oa-messaging/webhook';
declare global {
  const OAClient: typeof oa.OAClient;
  const items: typeof oa.items;
  const isOAError: typeof oa.isOAError;
  const client: oa.OAClient;
  const user_id: string;
  const msg: string;
  const ticket_id: string;
  const audioBuffer: Buffer;
  const params: oa.BroadcastParams & oa.BroadcastToGroupParams;
  const signal: AbortSignal;
  const apiKey: string;
  const apiSecret: string;
  const myReceiverUrl: string;
  const metrics: { increment(name: string): void };
  const log: { debug(message: string): void };
  const onEvent: (event: WebhookEvent) => void;
  const customers: { id: string; text: string }[];
  const alertOps: (message: string, details: unknown) => void;
  const markSent: (key: string, result: unknown) => void;
  const connection: { url: string };
  function queueForReview(user_id: string, msg: string): void;
  const app: {
    post(path: string, handler: (c: { req: { raw: Request } }) => unknown): void;
    post(path: string, handler: (req: IncomingMessage, res: ServerResponse) => unknown): void;
  };
  // The little of Deno, Bun and Cloudflare Workers the runtime recipes use, as their own type packages
  // (not installed here) declare it.
  const Deno: {
    env: { get(name: string): string | undefined };
    serve(
      options: { port?: number },
      handler: (request: Request) => Response | Promise<Response>,
    ): { finished: Promise<void> };
  };
  const Bun: {
    serve(options: {
      port?: number;
      fetch(request: Request): Response | Promise<Response>;
    }): { stop(): void };
  };
  interface ExecutionContext {
    waitUntil(promise: Promise<any>): void;
    passThroughOnException(): void;
  }
  interface KVNamespace {
    put(
      key: string,
      value: string | ArrayBuffer | ReadableStream,
      options?: { expiration?: number; expirationTtl?: number; metadata?: any },
    ): Promise<void>;
  }
}
`;
