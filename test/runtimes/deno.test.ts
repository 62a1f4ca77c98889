/** The SDK in Deno: see suite.ts. */
import { defineRuntimeSuite } from './suite.js';

defineRuntimeSuite('deno');
