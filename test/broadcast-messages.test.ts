/** The SDK's validation messages say the field, the rule and what to do, as the command line does. */
import { describe, expect, it } from 'vitest';
import { items, OAClient, OAValidationError } from '../src/index.js';
import { createMockServer } from '../src/testing/index.js';

describe('broadcast targets without their users', () => {
  it("target 'selected' without user_ids says it needs them, and nothing is sent", async () => {
    const mock = await createMockServer();
    const client = new OAClient({ baseUrl: mock.url, apiKey: mock.apiKey, apiSecret: mock.apiSecret });
    try {
      // @ts-expect-error: user_ids left out, as a JavaScript caller may
      const error = await client.broadcast({ target: 'selected', items: [items.text('hi')] }).catch((e) => e);
      expect(error).toBeInstanceOf(OAValidationError);
      expect((error as OAValidationError).issues).toEqual([
        {
          path: ['user_ids'],
          message: "required with target 'selected': one or more user_ids (or use target 'all')",
        },
      ]);
      expect((error as Error).message).toContain(
        "user_ids: required with target 'selected': one or more user_ids (or use target 'all')",
      );
      // @ts-expect-error: as above, for 'single'
      const single = await client.broadcast({ target: 'single', items: [items.text('hi')] }).catch((e) => e);
      expect((single as OAValidationError).issues).toEqual([
        { path: ['user_ids'], message: "required with target 'single': exactly one user_id" },
      ]);
      expect(mock.requests).toEqual([]);
    } finally {
      await client.close();
      await mock.close();
    }
  });
});
