/**
 * Under `exactOptionalPropertyTypes`, an optional property takes `undefined` only when its type says
 * so. API.md promises that every optional property of a public option type does: `{ onProgress:
 * undefined }`, `{ timeoutMs: process.env.X ? Number(process.env.X) : undefined }` must compile.
 *
 * The option types are found, not listed: every type exported under a name ending in `Options` by an
 * entry point, and every exported object type that one of their properties uses (an `appInfo`, a
 * `logger`, a rate-limit window), recursively. A source that imports them as a consumer does is then
 * type-checked with the repository's strict settings.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Each entry point of the package, and its source. */
const ENTRIES: Record<string, string> = {
  'oa-messaging': 'src/index.ts',
  'oa-messaging/webhook': 'src/webhook/index.ts',
  'oa-messaging/testing': 'src/testing/index.ts',
  'oa-messaging/testing/msw': 'src/testing/msw.ts',
  'oa-messaging/redis': 'src/redis/index.ts',
  'oa-messaging/queue': 'src/queue/index.ts',
};

/** The keys of `T` (in each member of a union) that are optional and do not take `undefined`. */
const REFUSING = `type Refusing<T> = T extends unknown
  ? { [K in keyof T]-?: {} extends Pick<T, K> ? (undefined extends Required<T>[K] ? never : K) : never }[keyof T]
  : never;`;

interface OptionType {
  entry: string;
  name: string;
  /** Type arguments for a generic type: `never`, so that a property typed by one is not excused. */
  typeArgs: number;
}

function compilerOptions(): ts.CompilerOptions {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!config) throw new Error('tsconfig.json could not be read');
  return { ...config.options, exactOptionalPropertyTypes: true, strict: true, noEmit: true };
}

/** The public option types, by the rule in this file's header. */
function findOptionTypes(program: ts.Program): OptionType[] {
  const checker = program.getTypeChecker();
  /** Every exported type, by its declaration: the entry and name a consumer imports it by. */
  const exported = new Map<ts.Symbol, OptionType>();
  for (const [entry, file] of Object.entries(ENTRIES)) {
    const source = program.getSourceFile(join(ROOT, file));
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error(`${file} is not a module`);
    for (const symbol of checker.getExportsOfModule(module)) {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      if (!(target.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias)) || exported.has(target))
        continue;
      const declaration = target.declarations?.[0] as ts.InterfaceDeclaration | ts.TypeAliasDeclaration;
      exported.set(target, { entry, name: symbol.name, typeArgs: declaration.typeParameters?.length ?? 0 });
    }
  }
  const found = new Map<ts.Symbol, OptionType>();
  const visit = (symbol: ts.Symbol) => {
    const option = exported.get(symbol);
    if (!option || found.has(symbol)) return;
    found.set(symbol, option);
    for (const property of checker.getPropertiesOfType(checker.getDeclaredTypeOfSymbol(symbol))) {
      const type = checker.getTypeOfSymbol(property);
      for (const part of type.isUnion() ? type.types : [type]) {
        const used = part.aliasSymbol ?? part.getSymbol();
        if (used && exported.has(used) && checker.getPropertiesOfType(part).length > 0) visit(used);
      }
    }
  };
  for (const [symbol, { name }] of exported) if (name.endsWith('Options')) visit(symbol);
  return [...found.values()];
}

/** One line per type, so that a diagnostic names its type by its line. */
function checkSource(types: OptionType[]): string {
  const imports = types.map((t, i) => `import type { ${t.name} as T${i} } from '${t.entry}';`);
  const checks = types.map((t, i) => {
    const args = t.typeArgs ? `<${Array(t.typeArgs).fill('never').join(', ')}>` : '';
    return `export const check${i}: Record<Refusing<T${i}${args}>, 'does not take undefined'> = {};`;
  });
  return [...imports, REFUSING, ...checks, ''].join('\n');
}

const options = compilerOptions();
const host = ts.createCompilerHost(options);
const entryFiles = Object.values(ENTRIES).map((file) => join(ROOT, file));
const entriesProgram = ts.createProgram({ rootNames: entryFiles, options, host });
const types = findOptionTypes(entriesProgram);

/** The check, compiled as a file of the test folder (so the `oa-messaging/*` paths resolve). */
const checkFile = join(ROOT, 'test', 'conventions', 'optional-undefined.check.ts');
const text = checkSource(types);
const checkHost: ts.CompilerHost = {
  ...host,
  fileExists: (file) => file === checkFile || host.fileExists(file),
  readFile: (file) => (file === checkFile ? text : host.readFile(file)),
  getSourceFile: (file, language, ...rest) =>
    file === checkFile
      ? ts.createSourceFile(file, text, language)
      : host.getSourceFile(file, language, ...rest),
};
const program = ts.createProgram({
  rootNames: [checkFile],
  options,
  host: checkHost,
  oldProgram: entriesProgram,
});
const checkSourceFile = program.getSourceFile(checkFile);
const diagnostics = checkSourceFile
  ? [...program.getSyntacticDiagnostics(checkSourceFile), ...program.getSemanticDiagnostics(checkSourceFile)]
  : [];
const firstCheckLine = types.length + REFUSING.split('\n').length;

/** The diagnostics on the line of the type at `index` (0-based), as text. */
function problemsOf(index: number): string[] {
  return diagnostics
    .filter(
      (d) =>
        d.start !== undefined &&
        d.file?.getLineAndCharacterOfPosition(d.start).line === firstCheckLine + index,
    )
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
}

describe('every optional property of a public option type takes undefined (exactOptionalPropertyTypes)', () => {
  it('finds the option types of every entry point, the nested ones too', () => {
    const names = types.map((t) => `${t.entry} ${t.name}`);
    for (const name of [
      'oa-messaging OAClientOptions',
      'oa-messaging UploadOptions',
      'oa-messaging RequestOptions',
      'oa-messaging AppInfo',
      'oa-messaging/webhook WebhookHandlerOptions',
      'oa-messaging/testing MockServerOptions',
      'oa-messaging/testing/msw MswHandlersOptions',
      'oa-messaging/redis RedisCoordinationOptions',
      'oa-messaging/queue OutboxOptions',
    ]) {
      expect(names).toContain(name);
    }
    expect(checkSourceFile).toBeDefined();
  });

  it('the check compiles apart from the types it finds wanting', () => {
    const outside = diagnostics.filter((d) => {
      const line = d.start === undefined ? -1 : (d.file?.getLineAndCharacterOfPosition(d.start).line ?? -1);
      return line < firstCheckLine || line >= firstCheckLine + types.length;
    });
    expect(outside.map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))).toEqual([]);
  });

  it.each(types.map((t, i) => [`${t.entry} ${t.name}`, i] as const))('%s', (_name, index) => {
    expect(problemsOf(index)).toEqual([]);
  });
});
