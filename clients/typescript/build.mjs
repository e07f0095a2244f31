#!/usr/bin/env node
/**
 * Builds the package with the repository's TypeScript and tsconfig.build.json: every file of src/ becomes
 * dist/<name>.js and dist/<name>.d.ts (ES modules; relative `.ts` imports rewritten to `.js`, in the declarations too).
 *
 * Not a plain `tsc -p tsconfig.build.json`: `sai run --local` (src/cli.ts) loads the service's engine through
 * src/local-engine.ts, which re-exports it from the repository (../../../lambdas/…) and so brings the engine into the
 * program. It is type-checked with the package (any error fails the build) but not emitted by tsc: only files under
 * src/ are written, flat in dist/, and local-engine.ts is bundled by esbuild instead (dist/local-engine.js, the engine
 * and its dependencies in one file, so the installed package runs configs without a checkout). A declaration or a
 * static import that would refer to a file outside src/ fails the build (it could not resolve in the installed
 * package).
 *
 * Plain JavaScript, so that `npm pack` runs it on any Node the repository's npm runs on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = path.dirname(fileURLToPath(import.meta.url));
const configFile = path.join(here, 'tsconfig.build.json');
const srcDir = path.join(here, 'src');

const host = { getCanonicalFileName: (f) => f, getCurrentDirectory: () => here, getNewLine: () => '\n' };
function fail(diagnostics) {
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host));
  process.stderr.write(`build.mjs: ${diagnostics.length} error(s), nothing written\n`);
  process.exit(1);
}

const read = ts.readConfigFile(configFile, ts.sys.readFile);
if (read.error) fail([read.error]);
const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, here, undefined, configFile);
if (parsed.errors.length) fail(parsed.errors);
const options = { ...parsed.options, noEmit: false };
const outDir = options.outDir;
/** Where tsc would write a file of src/ (rootDir is the repository's root): dist/clients/typescript/src/… */
const emittedSrcDir = path.join(outDir, path.relative(options.rootDir, srcDir));

const program = ts.createProgram({ rootNames: parsed.fileNames, options });
const diagnostics = ts.getPreEmitDiagnostics(program);
if (diagnostics.length) fail(diagnostics);

/** `./x.ts` → `./x.js` in the declarations' import and export specifiers and `import("./x.ts")` types. */
function rewriteSpecifiers(context) {
  const { factory } = context;
  const rewrite = (text) => (/^\.\.?\//.test(text) && /\.[cm]?ts$/.test(text) && !text.endsWith('.d.ts') ? text.replace(/ts$/, 'js') : text);
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      return factory.updateImportDeclaration(node, node.modifiers, node.importClause, factory.createStringLiteral(rewrite(node.moduleSpecifier.text)), node.attributes);
    }
    if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      return factory.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, factory.createStringLiteral(rewrite(node.moduleSpecifier.text)), node.attributes);
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const argument = factory.updateLiteralTypeNode(node.argument, factory.createStringLiteral(rewrite(node.argument.literal.text)));
      return factory.updateImportTypeNode(node, argument, node.attributes, node.qualifier, ts.visitNodes(node.typeArguments, visit), node.isTypeOf);
    }
    return ts.visitEachChild(node, visit, context);
  };
  return (file) => (ts.isSourceFile(file) ? ts.visitEachChild(file, visit, context) : file);
}

/** The module of the service's engine that `run --local` loads: bundled with esbuild below, not emitted by tsc. */
const ENGINE_ENTRY = path.join(srcDir, 'local-engine.ts');

const outputs = new Map();
const problems = [];
for (const file of program.getSourceFiles()) {
  if (file.isDeclarationFile || path.relative(srcDir, file.fileName).startsWith('..')) continue;
  if (path.resolve(file.fileName) === ENGINE_ENTRY) continue;
  const result = program.emit(file, (fileName, text) => {
    const rel = path.relative(emittedSrcDir, fileName);
    if (rel.startsWith('..')) throw new Error(`build.mjs: unexpected output ${fileName}`);
    // A declaration, or a static import of the JavaScript, that reaches outside dist/ would not resolve in the installed
    // package. (A dynamic import() in the JavaScript may: `run --local` loads the engine only when asked, from a clone.)
    const reference = fileName.endsWith('.d.ts') ? /(?:from\s+|import\()\s*["'](\.\.?\/[^"']*)["']/g : /^\s*(?:import|export)\b[^;]*?\bfrom\s*["'](\.\.?\/[^"']*)["']/gm;
    for (const m of text.matchAll(reference)) {
      const target = path.resolve(path.dirname(path.join(outDir, rel)), m[1]);
      if (path.relative(outDir, target).startsWith('..')) problems.push(`${rel} refers to ${m[1]}, outside the package`);
    }
    outputs.set(path.join(outDir, rel), text);
  }, undefined, false, { afterDeclarations: [rewriteSpecifiers] });
  if (result.diagnostics.length) fail(result.diagnostics);
}
if (problems.length) {
  process.stderr.write(`build.mjs: ${problems.join('\n')}\n`);
  process.exit(1);
}

// The engine for `run --local` (issue 40): src/local-engine.ts and everything it imports from the repository (the
// crawler, the loaders, the outbound guard, the HTTP client, the exports, and their npm dependencies) in one ES module,
// for the Node versions the `sai` command supports. The browser's packages stay outside (loaded by import() only when a
// config needs the browser engine): puppeteer-core and @sparticuz/chromium, optional peer dependencies. A CommonJS
// dependency's require() of a Node module goes through createRequire.
const esbuild = await import('esbuild');
const bundled = await esbuild.build({
  entryPoints: [ENGINE_ENTRY],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  write: false,
  outfile: path.join(outDir, 'local-engine.js'),
  external: ['puppeteer-core', '@sparticuz/chromium'],
  banner: { js: "import { createRequire as __saiCreateRequire } from 'node:module';\nconst require = __saiCreateRequire(import.meta.url);" },
  legalComments: 'eof',
  logLevel: 'warning',
});
for (const file of bundled.outputFiles) outputs.set(file.path, file.text);

fs.rmSync(outDir, { recursive: true, force: true });
for (const [fileName, text] of outputs) {
  fs.mkdirSync(path.dirname(fileName), { recursive: true });
  fs.writeFileSync(fileName, text);
}
process.stdout.write(`build.mjs: ${outputs.size} files in ${path.relative(process.cwd(), outDir) || '.'}\n`);
