/**
 * The types of `@opentelemetry/api`, an optional peer, as the package uses them: the API is loaded on
 * Node only (`node-api.ts`, given to the rest through `runtime.ts`). The providers a client is given
 * are typed loosely with its options (`core/options.ts`).
 */
import type * as OTel from '@opentelemetry/api';

/** The API module, as this package uses it. */
export type OTelApi = typeof OTel;
