/**
 * Builds the web inbox's page script (page/main.ts and what it imports) for the browser: one classic
 * script, inlined into the page. The package's build runs this once and puts the text in the bundle
 * (tsup.config.ts); from source (tests, tsx) script.ts runs it when it loads. esbuild is a
 * devDependency: nothing of the built package imports this file.
 */
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

/** The page script's entry point. */
const ENTRY = fileURLToPath(new URL('./page/main.ts', import.meta.url));
const TSCONFIG = fileURLToPath(new URL('./page/tsconfig.json', import.meta.url));

/** The page script, built: an ES2020 script with no imports, safe to put between `<script>` tags. */
export function buildInboxScript(): string {
  const { outputFiles } = buildSync({
    entryPoints: [ENTRY],
    tsconfig: TSCONFIG,
    bundle: true,
    write: false,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    charset: 'utf8',
    legalComments: 'none',
  });
  const text = outputFiles?.[0]?.text;
  if (text === undefined) throw new Error('esbuild wrote no page script');
  // The HTML parser ends an inline script at `</script` (esbuild escapes it in strings and templates).
  if (/<\/script|<!--/i.test(text))
    throw new Error('the page script holds </script or <!--: it cannot be inlined');
  return text;
}
