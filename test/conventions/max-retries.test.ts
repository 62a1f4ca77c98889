import { describe, expect, it } from 'vitest';
import { OAInternalServerError, OAValidationError } from '../../src/index.js';
import { clientFixture, rejection, tokensThen } from '../helpers/client-fixture.js';
import { json } from '../helpers/raw-server.js';

const fixture = clientFixture({ maxRetries: 2 });
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const failing = tokensThen((_req, res) =>
  json(res, 500, { code: 500, message: 'INTERNAL_SERVER_ERROR', info: 'down' }),
);

describe('maxRetries per call (as openai, Stripe and Octokit take it)', () => {
  it('replaces the client budget for that call only: 0 sends once, 1 twice, none uses the client 2', async () => {
    const { client } = await fixture.setup(failing);
    const file = { data: PNG, filename: 'a.png' };
    expect(await rejection(client.uploadImage(file, { maxRetries: 0 }))).toBeInstanceOf(
      OAInternalServerError,
    );
    expect(fixture.hits('/upload/image')).toBe(1);
    await rejection(client.uploadImage(file, { maxRetries: 1 }));
    expect(fixture.hits('/upload/image')).toBe(1 + 2);
    await rejection(client.uploadImage(file, { maxRetries: undefined }));
    expect(fixture.hits('/upload/image')).toBe(1 + 2 + 3);
  });

  it('a maxRetries that is not a whole number from 0 is refused before anything is sent', async () => {
    const { client } = await fixture.setup(failing);
    for (const maxRetries of [-1, 1.5, Number.NaN]) {
      const error = await rejection(client.sendText({ user_id: 'u-1', msg: 'hi' }, { maxRetries }));
      expect(error).toBeInstanceOf(OAValidationError);
    }
    expect(fixture.hits('/auth/token') + fixture.sends().length).toBe(0);
  });
});
