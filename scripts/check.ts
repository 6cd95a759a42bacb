// Type-check and lint in one process: `tsc --noEmit` on both projects (the service's, with the
// shipped router's check, and the web console's) and `eslint .`, with the lint's type-aware rules
// reading the same two TypeScript programs the type check built. Run apart, each built and checked
// both programs for itself: the lint's type-aware rules ask for nearly every type the check
// computes, so the pair cost about 165 s of CPU where this costs about 100. `npm run typecheck`
// and `npm run lint` stay as they are; CI runs this (.ci/run). Exits non-zero when either finds an
// error, after printing both.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';

const root = path.resolve(import.meta.dirname, '..');
const PROJECTS = ['tsconfig.json', 'client/console/tsconfig.json'];
/**
 * The router type the client package ships (client/dist, which `npm install` builds) against the
 * server's, both ways, for every procedure (test/fixtures/client-router/check.ts): checked in the
 * service's program, whose types of the server are already built, where a program of its own
 * built them all again (25 to 50 s of the suite's CPU). Outside tsconfig.json, so that `tsc` needs
 * no build; `npm run typecheck` checks it on its own after building the client.
 */
const ROUTER_CHECK = 'test/fixtures/client-router/check.ts';
const SHIPPED_ROUTER = 'client/dist/client/router.d.ts';
const extraRootsOf = (project: string): string[] => (project === 'tsconfig.json' ? [path.join(root, ROUTER_CHECK)] : []);

const programOf = (project: string): ts.Program => {
  const host: ts.ParseConfigFileHost = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
    },
  };
  const config = ts.getParsedCommandLineOfConfigFile(path.join(root, project), undefined, host);
  if (!config) throw new Error(`${project}: no configuration`);
  return ts.createProgram({ rootNames: [...config.fileNames, ...extraRootsOf(project)], options: config.options, projectReferences: config.projectReferences, configFileParsingDiagnostics: config.errors });
};

if (!existsSync(path.join(root, SHIPPED_ROUTER))) {
  process.stdout.write(`${SHIPPED_ROUTER} is missing: \`npm run build:client\` builds it (npm install does too)\n`);
  process.exit(1);
}
const programs = PROJECTS.map(programOf);

const formatHost: ts.FormatDiagnosticsHost = { getCanonicalFileName: (name) => name, getCurrentDirectory: () => root, getNewLine: () => '\n' };
const typeErrors = programs.flatMap((program) => [...ts.getPreEmitDiagnostics(program)]);
if (typeErrors.length > 0) process.stdout.write(ts.formatDiagnosticsWithColorAndContext(typeErrors, formatHost));
if (typeErrors.some((diagnostic) => diagnostic.file?.fileName === path.join(root, ROUTER_CHECK))) {
  process.stdout.write(`the router type in ${SHIPPED_ROUTER} is not the server's: \`npm run build:client\` writes it again (a client/dist older than a router change shows here too)\n`);
}
process.stdout.write(`type-check: ${typeErrors.length} error(s) in ${PROJECTS.join(', ')}\n`);

// The TypeScript files get their types from the programs above instead of a project service of
// their own; the rest of eslint.config.js applies unchanged.
const eslint = new ESLint({
  cwd: root,
  overrideConfig: [{ files: ['**/*.ts', '**/*.tsx'], languageOptions: { parserOptions: { projectService: false, programs } } }],
});
const results = await eslint.lintFiles(['.']);
const formatter = await eslint.loadFormatter('stylish');
const report = await formatter.format(results, { cwd: root, rulesMeta: eslint.getRulesMetaForResults(results) });
if (report) process.stdout.write(report);
const lintErrors = results.reduce((sum, result) => sum + result.errorCount + result.fatalErrorCount, 0);
const lintWarnings = results.reduce((sum, result) => sum + result.warningCount, 0);
process.stdout.write(`lint: ${results.length} files, ${lintErrors} error(s), ${lintWarnings} warning(s)\n`);

process.exitCode = typeErrors.length > 0 || lintErrors > 0 ? 1 : 0;
