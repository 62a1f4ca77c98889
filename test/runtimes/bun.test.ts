/** The SDK in Bun: see suite.ts. */
import { defineRuntimeSuite } from './suite.js';

defineRuntimeSuite('bun');
