/**
 * The Lambda layer of @sparticuz/chromium (layers/chromium): the package and its dependencies copied
 * from node_modules into `nodejs/node_modules` by a local bundling step (no Docker), so esbuild never
 * bundles the ~60 MB browser into a function.
 */
import fs from 'node:fs';
import path from 'node:path';
import { DockerImage } from 'aws-cdk-lib';
import { Architecture, Code, LayerVersion, Runtime } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { ROOT } from './lambda.ts';

/** Copies a package and, recursively, its production dependencies from `nodeModules` to `dest`. */
export function copyPackageTree(name: string, nodeModules: string, dest: string, seen = new Set<string>()): void {
  if (seen.has(name)) return;
  seen.add(name);
  const from = path.join(nodeModules, name);
  if (!fs.existsSync(from)) throw new Error(`${name} is not installed in ${nodeModules}; run npm install`);
  fs.cpSync(from, path.join(dest, name), { recursive: true, dereference: true });
  const pkg = JSON.parse(fs.readFileSync(path.join(from, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const dep of Object.keys(pkg.dependencies ?? {})) copyPackageTree(dep, nodeModules, dest, seen);
}

export function chromiumLayer(scope: Construct, id: string): LayerVersion {
  const source = path.join(ROOT, 'layers', 'chromium');
  return new LayerVersion(scope, id, {
    description: '@sparticuz/chromium for the browser engine (x86_64)',
    compatibleRuntimes: [Runtime.NODEJS_24_X],
    compatibleArchitectures: [Architecture.X86_64],
    code: Code.fromAsset(source, {
      bundling: {
        // Only used when local bundling fails: this app never needs Docker.
        image: DockerImage.fromRegistry('public.ecr.aws/sam/build-nodejs24.x'),
        local: {
          tryBundle(outputDir: string): boolean {
            copyPackageTree('@sparticuz/chromium', path.join(ROOT, 'node_modules'), path.join(outputDir, 'nodejs', 'node_modules'));
            return true;
          },
        },
      },
    }),
  });
}
