// Builds the client package (client/package.json, `npm run build:client`) into client/dist: ES2022
// JavaScript and .d.ts for client/ and the contracts it re-exports. The router's type is written
// out in full first: a first program (the repository's settings, the server included) reads every
// procedure's input and output, and the emitting program sees client/router.ts as those written-out
// types, so the server never enters the package or a consumer's type check. A declaration that
// still imports anything but the package's own files and its dependencies fails the build.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const REPO = path.resolve(import.meta.dirname, '..');
const CLIENT = path.join(REPO, 'client');
const ENTRY = path.join(CLIENT, 'index.ts');
const ROUTER = path.join(CLIENT, 'router.ts');
const OUT = path.join(CLIENT, 'dist');
/** What the emitted files may import besides their own relative paths: the package's dependencies and peer. */
const ALLOWED = new Set(['@trpc/client', '@trpc/server', 'superjson', 'zod']);

const fail = (message: string): never => {
  process.stderr.write(`build-client: ${message}\n`);
  process.exit(1);
};

const formatDiagnostics = (diagnostics: readonly ts.Diagnostic[]) =>
  ts.formatDiagnosticsWithColorAndContext(diagnostics, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => REPO, getNewLine: () => '\n' });

// The types are printed whole: no `...` truncation, no names from the server's scope.
const PRINT = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias | ts.TypeFormatFlags.UseStructuralFallback;

/** The router's procedures and root types, written out as a module of types that imports only @trpc/server. */
const writeRouterTypes = (): string => {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(REPO, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => fail(formatDiagnostics([d])) });
  if (!parsed) return fail('cannot read tsconfig.json');
  const program = ts.createProgram([ROUTER], parsed.options);
  // Only the entry's own diagnostics: `tsc --noEmit` checks the rest, and the whole server would double the time.
  const routerFile = program.getSourceFile(ROUTER)!;
  const errors = [...program.getSyntacticDiagnostics(routerFile), ...program.getSemanticDiagnostics(routerFile)];
  if (errors.length) fail(`client/router.ts does not type-check:\n${formatDiagnostics(errors)}`);
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(routerFile);
  const exported = moduleSymbol && checker.getExportsOfModule(moduleSymbol).find((s) => s.name === 'AppRouter');
  if (!exported) return fail('client/router.ts exports no AppRouter');
  const router = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(exported));
  const prop = (type: ts.Type, name: string): ts.Type => {
    const symbol = checker.getPropertyOfType(type, name);
    return symbol ? checker.getTypeOfSymbol(symbol) : fail(`no ${name} on ${checker.typeToString(type)}`);
  };
  const print = (type: ts.Type, where: string) => {
    const text = checker.typeToString(type, undefined, PRINT);
    // A name the printer could not write out (a server type, a unique symbol) would need the server.
    const bad = /\bimport\(|\btypeof\b|\.\.\./.exec(text);
    if (bad) fail(`${where}: the type cannot be written out on its own (${bad[0]}): …${text.slice(Math.max(0, bad.index - 300), bad.index + 100)}`);
    return text;
  };
  const def = prop(router, '_def');
  const root = prop(prop(def, '_config'), '$types');

  const KINDS: Record<string, string> = { '"query"': 'TRPCQueryProcedure', '"mutation"': 'TRPCMutationProcedure', '"subscription"': 'TRPCSubscriptionProcedure' };
  let count = 0;
  const record = (type: ts.Type, indent: string, where: string): string => {
    const lines = checker.getPropertiesOfType(type).map((member) => {
      const value = checker.getTypeOfSymbol(member);
      const name = `${where}${member.name}`;
      const procedureDef = checker.getPropertyOfType(value, '_def') && prop(value, '_def');
      if (procedureDef && checker.getPropertyOfType(procedureDef, 'procedure')) {
        const kind = KINDS[checker.typeToString(prop(procedureDef, 'type'))] ?? fail(`${name}: unknown procedure kind`);
        const types = prop(procedureDef, '$types');
        count++;
        return `${indent}${member.name}: ${kind}<{ input: ${print(prop(types, 'input'), `${name} input`)}; output: ${print(prop(types, 'output'), `${name} output`)}; meta: object; errorShape: ErrorShape }>;`;
      }
      return `${indent}${member.name}: {\n${record(value, `${indent}  `, `${name}.`)}\n${indent}};`;
    });
    return lines.join('\n');
  };
  const procedures = record(prop(def, 'record'), '    ', '');
  process.stderr.write(`build-client: ${count} procedures written out\n`);
  return [
    '// Written by scripts/build-client.ts from the server\'s router: each procedure\'s input and output.',
    "import type { TRPCBuiltRouter, TRPCMutationProcedure, TRPCQueryProcedure, TRPCSubscriptionProcedure } from '@trpc/server';",
    '',
    `type ErrorShape = ${print(prop(root, 'errorShape'), 'errorShape')};`,
    '',
    "/** A tracked subscription event as the client gets it: tRPC's own TrackedData, which @trpc/server does not export. */",
    'interface TrackedData<TData> {',
    '  id: string;',
    '  data: TData;',
    '}',
    '',
    'export type AppRouter = TRPCBuiltRouter<',
    `  { ctx: object; meta: object; errorShape: ErrorShape; transformer: ${print(prop(root, 'transformer'), 'transformer')} },`,
    '  {',
    procedures,
    '  }',
    '>;',
    '',
  ].join('\n');
};

/** Emits client/ and the contracts it imports, client/router.ts read as the written-out types. */
const emit = (routerSource: string) => {
  rmSync(OUT, { recursive: true, force: true });
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    // ES2022 syntax; String#isWellFormed (contracts/common.ts) is ES2024 but in Node 20 and current browsers.
    lib: ['lib.es2022.d.ts', 'lib.es2024.string.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    types: [],
    strict: true,
    noUncheckedIndexedAccess: true,
    declaration: true,
    rootDir: REPO,
    outDir: OUT,
    allowImportingTsExtensions: true,
    rewriteRelativeImportExtensions: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    skipLibCheck: true,
    removeComments: false,
    newLine: ts.NewLineKind.LineFeed,
  };
  const host = ts.createCompilerHost(options);
  const readSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) =>
    path.resolve(fileName) === ROUTER ? ts.createSourceFile(fileName, routerSource, languageVersion, true) : readSourceFile(fileName, languageVersion, onError, shouldCreate);
  // Declarations keep the sources' `.ts` specifiers: they are rewritten to the emitted `.js`, as the JavaScript's are.
  host.writeFile = (fileName, text, writeByteOrderMark) =>
    ts.sys.writeFile(fileName, fileName.endsWith('.d.ts') ? text.replace(/((?:from|import)\s*\(?\s*['"]\.\.?\/[^'"]*)\.ts(['"])/g, '$1.js$2') : text, writeByteOrderMark);
  const program = ts.createProgram([ENTRY], options, host);
  const outside = program.getSourceFiles().filter((f) => !f.isDeclarationFile && !f.fileName.startsWith(`${CLIENT}/`) && !f.fileName.startsWith(`${REPO}/contracts/`));
  if (outside.length) fail(`the package would hold files from outside client/ and contracts/: ${outside.map((f) => f.fileName).join(', ')}`);
  const result = program.emit();
  const diagnostics = [...ts.getPreEmitDiagnostics(program), ...result.diagnostics];
  if (diagnostics.length) fail(`the package does not compile for ES2022:\n${formatDiagnostics(diagnostics)}`);
};

/** Every import of every emitted file is relative or one of the package's dependencies. */
const checkImports = (dir: string) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      checkImports(file);
      continue;
    }
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)) {
      const specifier = match[1]!;
      if (specifier.startsWith('./') || specifier.startsWith('../')) {
        if (!specifier.endsWith('.js')) fail(`${file} imports ${specifier} (not a .js path)`);
        continue;
      }
      const pkg = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
      if (!ALLOWED.has(pkg)) fail(`${file} imports ${specifier}, which is not a dependency of the package`);
    }
  }
};

/**
 * What the build reads, hashed: the sources the router's type and the package come from (server/,
 * contracts/, client/ but its console and output), this script, the compiler settings and the
 * lockfile (every dependency's version, TypeScript's among them). The same inputs build the same
 * package: `npm ci` builds it (prepare) and the suite's `npm pack` (prepack) would build it again,
 * two TypeScript programs for nothing.
 */
const INPUT_DIRS = ['server', 'contracts', 'client'];
const INPUT_FILES = ['scripts/build-client.ts', 'tsconfig.json', 'package.json', 'package-lock.json', 'client/package.json'];
const SKIPPED = new Set([path.join(CLIENT, 'console'), OUT, path.join(CLIENT, 'node_modules')]);
/** One per checkout: git worktrees may share one node_modules, each with a client/dist of its own. */
const STAMP = path.join(REPO, 'node_modules', '.cache', 'trading-service', `client-build-inputs-${createHash('sha256').update(OUT).digest('hex').slice(0, 12)}`);

const inputsHash = (): string => {
  const hash = createHash('sha256');
  const add = (file: string) => hash.update(`${path.relative(REPO, file)}\0`).update(readFileSync(file)).update('\0');
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = path.join(dir, entry.name);
      if (SKIPPED.has(file)) continue;
      if (entry.isDirectory()) walk(file);
      else if (entry.isFile()) add(file);
    }
  };
  for (const dir of INPUT_DIRS) walk(path.join(REPO, dir));
  for (const file of INPUT_FILES) if (existsSync(path.join(REPO, file))) add(path.join(REPO, file));
  return hash.digest('hex');
};

const started = Date.now();
const inputs = inputsHash();
const built = existsSync(path.join(OUT, 'client', 'index.js')) && existsSync(path.join(OUT, 'client', 'router.d.ts'));
if (built && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === inputs && !process.argv.includes('--force')) {
  process.stderr.write('build-client: client/dist is up to date (its inputs are unchanged; --force builds anyway)\n');
} else {
  rmSync(STAMP, { force: true });
  emit(writeRouterTypes());
  checkImports(OUT);
  mkdirSync(path.dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, inputs);
  process.stderr.write(`build-client: client/dist written in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
