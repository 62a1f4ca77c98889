/** The SDK in workerd (Cloudflare Workers' runtime), as a bundled Worker: see suite.ts. */
import { defineRuntimeSuite } from './suite.js';

defineRuntimeSuite('workerd');
