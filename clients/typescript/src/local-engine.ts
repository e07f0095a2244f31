/**
 * What `sai run --local` needs of the service's engine (lambdas/engine, lambdas/net, lambdas/export), in one module
 * that cli.ts loads only when a local run is asked for. In a clone it is these re-exports of the repository's code;
 * in the package, build.mjs bundles it with esbuild into dist/local-engine.js (every dependency inlined but the
 * browser's: puppeteer-core and @sparticuz/chromium, optional peer dependencies loaded only by a config that needs the
 * browser engine), so the installed package runs configs without a checkout (issue 40).
 */
export { parseConfig } from '../../../lambdas/engine/config.ts';
export { runConfig } from '../../../lambdas/engine/engines.ts';
export { describePages } from '../../../lambdas/engine/crawler.ts';
export { BrowserHost } from '../../../lambdas/engine/browser/host.ts';
export { OutboundGuard } from '../../../lambdas/net/guard.ts';
export { Fetcher } from '../../../lambdas/net/fetch.ts';
export { exportRows } from '../../../lambdas/export/rows-export.ts';
