/**
 * Fast readers compiled once from the webhook schemas. A reader returns exactly what the schema's
 * `safeParse` would give as `data` (same values, same key order) when the value is already in the form
 * the schema outputs (numbers as finite numbers, strings as strings, no field missing that is required),
 * and {@link SLOW} for anything else, which is then left to zod. So a well-formed event costs a few
 * property checks, and an odd one is judged, normalised and reported by the schemas as before.
 */
import type * as z from 'zod/mini';

/** What a reader returns when zod must decide: the value is not in the schema's output form. */
export const SLOW = Symbol('oa-messaging.webhook.slow');

/** Reads a value the way a schema would, or returns {@link SLOW}. */
export type Reader = (value: unknown) => unknown;

interface Field {
  key: string;
  read: Reader;
  optional: boolean;
}

/** The zod internals a compiler reads: the definition's kind and its parts. */
interface Def {
  type: string;
  checks?: unknown[];
  innerType?: z.ZodMiniType;
  element?: z.ZodMiniType;
  shape?: Record<string, z.ZodMiniType>;
  catchall?: z.ZodMiniType;
  values?: unknown[];
}

const defOf = (schema: z.ZodMiniType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** A JSON object (not an array, not null). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A number written as a string, as `NumberLikeSchema` takes one. */
export const NUMERIC_STRING = /^\s*-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/**
 * A `NumberLikeSchema` field when it needs no judging: a finite number, or a numeric string as one;
 * `undefined` for anything else.
 */
export function plainNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || !NUMERIC_STRING.test(value)) return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : undefined;
}

/** A `StringLikeSchema` field when it needs no judging: a string, or a finite number as a string. */
export function plainString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

/** A `z.string()` field: a string. */
export const onlyString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;

const readString: Reader = (value) => (typeof value === 'string' ? value : SLOW);

/** Whether a value is an object as `JSON.parse` makes them; anything else goes to zod. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Reads each field of the shape into `out`; `false` when one is not in the schema's output form. */
function readShape(fields: readonly Field[], value: Record<string, unknown>, out: Record<string, unknown>) {
  for (const { key, read, optional } of fields) {
    const field = value[key];
    if (field === undefined) {
      if (!optional || key in value) return false;
      continue;
    }
    const result = read(field);
    if (result === SLOW) return false;
    out[key] = result;
  }
  return true;
}

function objectReader(
  shape: Record<string, z.ZodMiniType>,
  known: ReadonlyMap<z.ZodMiniType, Reader>,
): Reader | undefined {
  const fields: Field[] = [];
  for (const [key, schema] of Object.entries(shape)) {
    const def = defOf(schema);
    const optional = def.type === 'optional';
    const read = compileReader(optional && def.innerType ? def.innerType : schema, known);
    if (!read) return undefined;
    fields.push({ key, read, optional });
  }
  const inShape = new Set(Object.keys(shape));
  const position = new Map(fields.map(({ key }, index) => [key, index]));
  /** The fields read into a copy of `value`, or `undefined` when the copy's key order would not be zod's. */
  const readInOrder = (value: Record<string, unknown>): unknown => {
    // zod writes the shape's fields first, in shape order, then the others in input order: a value whose
    // keys already come so is copied whole (fast), and its fields are then replaced by what they read.
    let next = 0;
    let others = false;
    for (const key in value) {
      const at = position.get(key);
      if (at === undefined) {
        if (key === '__proto__') return SLOW;
        others = true;
      } else if (others || at < next) {
        return undefined;
      } else {
        next = at + 1;
      }
    }
    const out: Record<string, unknown> = Object.assign({}, value);
    return readShape(fields, value, out) ? out : SLOW;
  };
  return (value) => {
    if (!isPlainObject(value)) return SLOW;
    const copied = readInOrder(value);
    if (copied !== undefined) return copied;
    // As zod builds its output: the shape's fields in shape order, then the others in input order.
    const out: Record<string, unknown> = {};
    if (!readShape(fields, value, out)) return SLOW;
    for (const key in value) {
      if (inShape.has(key)) continue;
      // An own `__proto__` key would set the prototype here; zod knows how to copy it.
      if (key === '__proto__') return SLOW;
      out[key] = value[key];
    }
    return out;
  };
}

/**
 * A reader for `schema`, or `undefined` when it uses something the compiler does not know (a check, a
 * refinement, a transform other than those in `known`): then the schema alone reads such values.
 * `known` gives the readers of schemas that normalise (a number that may arrive as a string...): each
 * must accept only values the schema outputs unchanged.
 */
export function compileReader(
  schema: z.ZodMiniType,
  known: ReadonlyMap<z.ZodMiniType, Reader>,
): Reader | undefined {
  const given = known.get(schema);
  if (given) return given;
  const def = defOf(schema);
  if (def.checks !== undefined && def.checks.length > 0) return undefined;
  switch (def.type) {
    case 'optional':
      // A missing value is the caller's to skip (an object reader knows which fields may be missing);
      // `undefined` itself goes to zod.
      return def.innerType && compileReader(def.innerType, known);
    case 'string':
      return readString;
    case 'literal': {
      const values = def.values ?? [];
      return (value) => (values.includes(value) ? value : SLOW);
    }
    case 'array': {
      const element = def.element && compileReader(def.element, known);
      if (!element) return undefined;
      return (value) => {
        if (!Array.isArray(value)) return SLOW;
        const out = new Array<unknown>(value.length);
        for (let index = 0; index < value.length; index++) {
          const result = element(value[index]);
          if (result === SLOW) return SLOW;
          out[index] = result;
        }
        return out;
      };
    }
    case 'object':
      // Only loose objects (unknown fields kept as they are): the webhook schemas are all loose.
      if (!def.shape || !def.catchall || defOf(def.catchall).type !== 'unknown') return undefined;
      return objectReader(def.shape, known);
    default:
      return undefined;
  }
}
