/**
 * `cdk synth` with the pinned CDK CLI for both stages, offline, bundling every function with the local
 * esbuild (no Docker) and running cdk-nag's AwsSolutions pack: what CI and `npm run synth` do.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { routes } from '../../lambdas/routes.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..');
const CDK = path.join(ROOT, 'node_modules', '.bin', 'cdk');

describe('cdk synth', () => {
  for (const stage of ['dev', 'prod']) {
    it(`synthesizes the ${stage} stage`, async () => {
      const out = fs.mkdtempSync(path.join(os.tmpdir(), `sai-cdk-${stage}-`));
      const { stderr } = await run(CDK, ['synth', '-c', `stage=${stage}`, '--quiet', '--output', out], {
        cwd: ROOT,
        env: { ...process.env, CDK_DISABLE_VERSION_CHECK: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true', PATH: `${path.join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}` },
        maxBuffer: 64 * 1024 * 1024,
        timeout: 300_000,
      });
      assert.doesNotMatch(stderr, /Synthesis finished with errors|AwsSolutions-\w+\]?:? .*ERROR/);
      const template = JSON.parse(fs.readFileSync(path.join(out, `ScrapeAi-${stage}.template.json`), 'utf8')) as { Resources: Record<string, { Type: string; Properties: { Code?: { S3Key?: string }; FunctionName?: string } }> };
      const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties.FunctionName?.startsWith(`scrape-ai-${stage}-`));
      assert.equal(functions.length, routes.length + 6, 'a function per route, the authorizer, the run and generate workers, the dead-letter consumer, the webhook worker and the schedule sweeper');
      const assets = fs.readdirSync(out).filter((f) => f.startsWith('asset.'));
      const bundles = assets.filter((a) => fs.existsSync(path.join(out, a, 'index.mjs')));
      assert.ok(bundles.length >= routes.length + 6, `${bundles.length} bundled functions`);
      assert.ok(assets.some((a) => fs.existsSync(path.join(out, a, 'nodejs', 'node_modules', '@sparticuz', 'chromium', 'bin', 'chromium.br'))), 'the Chromium layer asset');
      fs.rmSync(out, { recursive: true, force: true });
    });
  }
});
