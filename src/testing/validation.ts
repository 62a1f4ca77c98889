/**
 * Request-body checks of the JSON endpoints, written apart from the SDK's schemas so that the fake can
 * catch what the SDK gets wrong. Messages follow class-validator (what a NestJS API answers); the spec
 * does not show the info texts of validation errors.
 */

type Body = Record<string, unknown>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Items per broadcast (spec "Limits", endpoints 6-8). */
const MAX_ITEMS = 5;
/** Length of an item's `desc` (spec "Limits"), counted in code points. */
const DESC_MAX_CHARS = 170;

const ITEM_TYPES = ['message', 'oa_image_link', 'image', 'flex', 'video', 'audio'] as const;
const TARGETS = ['all', 'selected', 'single'] as const;

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

interface StringRule {
  optional?: boolean;
  url?: boolean;
  uuid?: boolean;
  maxChars?: number;
}

/** Collects class-validator-style messages for one body. */
class Issues {
  readonly messages: string[] = [];

  string(obj: Body, field: string, name: string, rule: StringRule = {}): string | undefined {
    const value = obj[field];
    if (value === undefined || value === null || value === '') {
      if (!rule.optional) this.messages.push(`${name} should not be empty`);
      return undefined;
    }
    if (typeof value !== 'string') {
      this.messages.push(`${name} must be a string`);
      return undefined;
    }
    if (rule.url && !isHttpUrl(value)) this.messages.push(`${name} must be a URL address`);
    if (rule.uuid && !UUID.test(value)) this.messages.push(`${name} must be a UUID`);
    if (rule.maxChars !== undefined && Array.from(value).length > rule.maxChars) {
      this.messages.push(`${name} must be shorter than or equal to ${rule.maxChars} characters`);
    }
    return value;
  }

  number(obj: Body, field: string, name: string): void {
    const value = obj[field];
    if (value === undefined || value === null) this.messages.push(`${name} should not be empty`);
    else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      this.messages.push(`${name} must be a number conforming to the specified constraints`);
    }
  }

  oneOf(obj: Body, field: string, name: string, values: readonly string[]): string | undefined {
    const value = obj[field];
    if (typeof value === 'string' && values.includes(value)) return value;
    this.messages.push(`${name} must be one of the following values: ${values.join(', ')}`);
    return undefined;
  }

  /** `msg` of an item: a string, or a non-empty array of strings (the spec allows `string[]`). */
  msg(item: Body, name: string, rule: StringRule): void {
    const value = item.msg;
    if (Array.isArray(value)) {
      if (value.length === 0) this.messages.push(`${name} should not be empty`);
      for (let i = 0; i < value.length; i++)
        this.string(value as unknown as Body, String(i), `${name}.${i}`, rule);
      return;
    }
    this.string(item, 'msg', name, rule);
  }

  item(value: unknown, at: string): void {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.messages.push(`${at} must be an object`);
      return;
    }
    const item = value as Body;
    const type = this.oneOf(item, 'type', `${at}.type`, ITEM_TYPES);
    const msg = `${at}.msg`;
    switch (type) {
      case 'image':
      case 'oa_image_link':
        this.msg(item, msg, { url: true });
        if (type === 'oa_image_link') this.string(item, 'link', `${at}.link`, { url: true });
        break;
      case 'flex':
        this.msg(item, msg, {});
        if (typeof item.msg === 'string' && !isJsonDocument(item.msg)) {
          this.messages.push(`${msg} must be a JSON string`);
        }
        break;
      case 'audio':
        this.msg(item, msg, { url: true });
        this.string(item, 'audio_uuid', `${at}.audio_uuid`);
        this.number(item, 'audio_size', `${at}.audio_size`);
        this.number(item, 'audio_duration', `${at}.audio_duration`);
        break;
      default:
        this.msg(item, msg, {});
    }
    if (type !== 'oa_image_link') this.string(item, 'link', `${at}.link`, { optional: true, url: true });
    this.string(item, 'desc', `${at}.desc`, { optional: true, maxChars: DESC_MAX_CHARS });
  }

  items(obj: Body): void {
    const value = obj.items;
    if (value === undefined || value === null) {
      this.messages.push('items should not be empty');
      return;
    }
    if (!Array.isArray(value)) {
      this.messages.push('items must be an array');
      return;
    }
    if (value.length === 0) this.messages.push('items should not be empty');
    if (value.length > MAX_ITEMS) this.messages.push(`items must contain no more than ${MAX_ITEMS} elements`);
    for (const [i, item] of value.entries()) this.item(item, `items.${i}`);
  }
}

function isJsonDocument(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null;
  } catch {
    return false;
  }
}

/** The checks of each JSON endpoint, by the last two path segments. */
const checks: Record<string, (body: Body, issues: Issues) => void> = {
  'auth/token': (b, v) => {
    v.string(b, 'api_key', 'api_key');
    v.string(b, 'api_secret', 'api_secret');
  },
  'auth/refresh-token': (b, v) => {
    v.string(b, 'refresh_token', 'refresh_token');
  },
  'webhook/broadcast-greeting': (b, v) => {
    v.string(b, 'user_id', 'user_id');
  },
  'webhook/broadcast-image-link': (b, v) => {
    v.string(b, 'user_id', 'user_id');
    v.string(b, 'image_url', 'image_url', { url: true });
    v.string(b, 'link', 'link', { optional: true, url: true });
  },
  'webhook/broadcast-message': (b, v) => {
    v.string(b, 'user_id', 'user_id');
    v.string(b, 'msg', 'msg');
    v.string(b, 'desc', 'desc', { optional: true });
  },
  'message/broadcast-message': (b, v) => {
    const target = v.oneOf(b, 'target', 'target', TARGETS);
    if (target === 'selected' || target === 'single') {
      const ids = b.user_ids;
      if (!Array.isArray(ids) || ids.length === 0) {
        v.messages.push(`user_ids should not be empty when target is ${target}`);
      } else {
        for (let i = 0; i < ids.length; i++) v.string(ids as unknown as Body, String(i), `user_ids.${i}`);
        // The spec does not show what `single` does with several ids; the fake refuses them.
        if (target === 'single' && ids.length > 1) {
          v.messages.push('user_ids must contain exactly one element when target is single');
        }
      }
    }
    v.items(b);
  },
  'message/broadcast-group-message': (b, v) => {
    v.string(b, 'account_provider_group_id', 'account_provider_group_id', { uuid: true });
    v.items(b);
  },
  'message/broadcast-member-session': (b, v) => {
    v.string(b, 'member_group_broadcast_id', 'member_group_broadcast_id', { uuid: true });
    v.items(b);
  },
  'webhook/broadcast-video': (b, v) => {
    v.string(b, 'user_id', 'user_id');
    v.string(b, 'ticket_id', 'ticket_id', { uuid: true });
  },
  'webhook/broadcast-audio': (b, v) => {
    v.string(b, 'user_id', 'user_id');
    v.string(b, 'audio_url', 'audio_url', { url: true });
    v.string(b, 'audio_uuid', 'audio_uuid', { uuid: true });
    v.number(b, 'audio_size', 'audio_size');
    v.number(b, 'audio_duration', 'audio_duration');
  },
};

/**
 * The validation messages for a body sent to `route` (e.g. `webhook/broadcast-message`); empty when the
 * body is valid. Unknown fields are ignored, as a whitelisting ValidationPipe does.
 */
export function validateBody(route: string, body: unknown): string[] {
  const check = checks[route];
  if (!check) return [];
  const issues = new Issues();
  const obj = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Body) : {};
  check(obj, issues);
  return issues.messages;
}
