/**
 * The webhook reader's fast path: readers compiled from the schemas (`compiled.ts`) for the fields and
 * elements that arrive in the schemas' output form, and the hand-written reader of a well-formed
 * message event (`well-formed.ts`). Each gives exactly what the schemas give, only sooner. The runtime
 * files bring it on Node, Bun and Deno, where a server reads event after event; not on workerd, where a
 * Worker reads one event per request and the size of its bundle counts for more than microseconds.
 */
import type * as z from 'zod/mini';
import { compileReader, isJsonObject, plainNumber, plainString, type Reader, SLOW } from './compiled.js';
import type { KnownMsgBodyElementSchema } from './element-schemas.js';
import type { WebhookEvent } from './schemas.js';
import { readWellFormedEvent } from './well-formed.js';

/**
 * The schemas the fast path is compiled from, passed in by the reader: this module makes none, so that
 * a runtime that brings it loads no webhook schema before a webhook is read.
 */
export interface FastPathSchemas {
  NumberLikeSchema: z.ZodMiniType;
  StringLikeSchema: z.ZodMiniType;
  TimestampSchema: z.ZodMiniType;
  KnownMsgBodyElementSchema: typeof KnownMsgBodyElementSchema;
  /** The schema of an element of a type the SDK does not know. */
  ElementTypeSchema: z.ZodMiniType;
  /** `AndroidInfo` and `ApnsInfo`: any plain object. */
  LooseObjectSchema: z.ZodMiniType;
}

/** The fast readers, each giving {@link SLOW} (or `undefined`) where the schemas must judge. */
export interface WebhookFastPath {
  /** The fast reader of each field of a shape that has one (compiled once per shape). */
  fieldReaders(shape: Record<string, z.ZodMiniType>): ReadonlyMap<string, Reader>;
  /** The fast reader of an element of this `MsgType`, if there is one. */
  elementReader(type: string): Reader | undefined;
  /** A well-formed `message` event as the general reader reads it, or `undefined`. */
  readWellFormed(value: Record<string, unknown>): WebhookEvent | undefined;
}

/** Compiles the fast path from `schemas`. */
export function webhookFastPath(schemas: FastPathSchemas): WebhookFastPath {
  /**
   * The schemas that normalise, read fast with their own normalisation when its result passes their
   * check (a finite number, a string); anything else is left to the schema.
   */
  const normalising = new Map<z.ZodMiniType, Reader>([
    [schemas.NumberLikeSchema, (value) => plainNumber(value) ?? SLOW],
    [schemas.StringLikeSchema, (value) => plainString(value) ?? SLOW],
    [schemas.TimestampSchema, (value) => (typeof value === 'string' ? value : SLOW)],
  ]);

  const fieldReaders = new WeakMap<Record<string, z.ZodMiniType>, Map<string, Reader>>();
  const readersOf = (shape: Record<string, z.ZodMiniType>): Map<string, Reader> => {
    let readers = fieldReaders.get(shape);
    if (!readers) {
      readers = new Map();
      for (const [key, schema] of Object.entries(shape)) {
        const read = compileReader(schema, normalising);
        if (read) readers.set(key, read);
      }
      fieldReaders.set(shape, readers);
    }
    return readers;
  };

  /** Each known element type's fast reader, and one for the types the SDK does not know. */
  const elementReaders = new Map<string, Reader | undefined>(
    schemas.KnownMsgBodyElementSchema.def.options.flatMap((option) => {
      const read = compileReader(option, normalising);
      return option.shape.MsgType.def.values.map((type) => [type, read] as const);
    }),
  );
  const readUnknownElement = compileReader(schemas.ElementTypeSchema, normalising);
  const elementReader = (type: string) =>
    elementReaders.has(type) ? elementReaders.get(type) : readUnknownElement;

  const readLooseObject = compileReader(schemas.LooseObjectSchema, normalising);
  const plainLooseObject = (value: unknown): unknown => {
    const read = readLooseObject ? readLooseObject(value) : SLOW;
    return read === SLOW ? undefined : read;
  };

  /** `MsgBody` when each element reads fast (a plain object of its type), or `undefined`. */
  const readPlainElements = (value: unknown[]): unknown[] | undefined => {
    const body: unknown[] = [];
    for (let index = 0; index < value.length; index++) {
      const element = value[index];
      if (!isJsonObject(element)) return undefined;
      const type = element.MsgType;
      if (typeof type !== 'string') return undefined;
      const read = elementReader(type);
      const quick = read ? read(element) : SLOW;
      if (quick === SLOW) return undefined;
      body.push(quick);
    }
    return body;
  };

  return {
    fieldReaders: readersOf,
    elementReader,
    readWellFormed: (value) => readWellFormedEvent(value, readPlainElements, plainLooseObject),
  };
}
