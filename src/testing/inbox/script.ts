/**
 * The web inbox's script, run in the browser: the TypeScript of page/, built into one inline script.
 * The package's build puts the built text in place of this module (tsup.config.ts), so the package
 * builds nothing at run time; from source (tests, tsx) it is built here, when this module loads.
 */
import { buildInboxScript } from './build-script.js';

/** The page's script, as the `<script>` element of the page holds it. */
export const INBOX_SCRIPT: string = buildInboxScript();
