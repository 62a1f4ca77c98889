// A path on workerd: its runtime files (src/*/runtime-workerd.ts) refuse it as the web ones do where
// there is neither Bun nor Deno (as under Node here), with the same error for every kind of path.
import { describe, expect, it } from 'vitest';
import * as coreWeb from '../../src/core/runtime-web.js';
import * as coreWorkerd from '../../src/core/runtime-workerd.js';
import * as telemetryWeb from '../../src/telemetry/runtime-web.js';
import * as uploadsWeb from '../../src/uploads/runtime-web.js';
import * as uploadsWorkerd from '../../src/uploads/runtime-workerd.js';
import { filelessPathSource, webPathSource } from '../../src/uploads/web-files.js';
import * as webhookWeb from '../../src/webhook/runtime-web.js';
import * as webhookWorkerd from '../../src/webhook/runtime-workerd.js';

// What each runtime's files give, together (telemetry is the web one on workerd too).
const web = { ...coreWeb, ...uploadsWeb, ...telemetryWeb, ...webhookWeb };
const workerd = { ...coreWorkerd, ...uploadsWorkerd, ...telemetryWeb, ...webhookWorkerd };

const PATHS: (string | URL)[] = [
  'photo.png',
  'dir/sub/clip.mp4',
  'C:\\files\\song.mp3',
  'file:///srv/a%20b.png',
  'FILE:///srv/upper.png',
  'file:bad%',
  'https://cdn.example.com/c.png',
  new URL('file:///srv/d.png'),
  new URL('https://cdn.example.com/e.png'),
];

/** What a refusal is: its class, message, path and cause. */
async function refusal(read: Promise<unknown>) {
  const error = (await read.then(
    () => undefined,
    (e: unknown) => e,
  )) as (Error & { path?: unknown }) | undefined;
  expect(error).toBeInstanceOf(Error);
  return {
    type: error?.constructor,
    message: error?.message,
    path: error?.path,
    cause: String(error?.cause),
  };
}

describe('a path where there is no file system', () => {
  it('is refused by the workerd platform as by the web platform', async () => {
    for (const path of PATHS) {
      const expected = await refusal(webPathSource(path));
      expect(await refusal(filelessPathSource(path)), String(path)).toEqual(expected);
      expect(await refusal(workerd.pathSource(path)), String(path)).toEqual(expected);
    }
  });

  it('the rest of the workerd platform is the web platform', async () => {
    expect(workerd.runtime()).toBe(web.runtime());
    expect(() => workerd.defaultTransport({} as never, false)).toThrow(
      'dispatcher is an undici Dispatcher, which this runtime does not send with: pass fetch instead',
    );
    expect(workerd.detect).toBe(web.detect);
    expect(workerd.otelApi()).toBeUndefined();
    expect(() =>
      workerd.clientTelemetry({ tracerProvider: {} as never }, {} as never, new URL('https://x'), false),
    ).toThrow('tracerProvider must be an OpenTelemetry TracerProvider (with getTracer)');
    expect(() =>
      workerd.clientTelemetry(
        { tracerProvider: { getTracer: () => ({}) } },
        {} as never,
        new URL('https://x'),
        false,
      ),
    ).toThrow('tracerProvider and meterProvider work on Node only');
    expect(await workerd.decodeWithZlib(new Uint8Array(1), 'br', 10)).toBe(
      await web.decodeWithZlib(new Uint8Array(1), 'br', 10),
    );
  });
});
