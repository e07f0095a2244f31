/**
 * The one way this app makes a Lambda function: NodejsFunction (esbuild, local, no Docker) on
 * nodejs24.x, ESM, minified with source maps, the AWS services injected (lambdas/adapters/aws/install.ts),
 * the AWS SDK left to the runtime, logs with a retention, and X-Ray tracing.
 */
import path from 'node:path';
import { Duration, Size } from 'aws-cdk-lib';
import { Architecture, LoggingFormat, Runtime, Tracing, type ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { StageConfig } from './stage.ts';

export const ROOT = path.resolve(import.meta.dirname, '..');

/** Modules the bundles never contain: the SDK comes with the runtime, Chromium with its layer. */
export const EXTERNAL_MODULES = ['@aws-sdk/*', '@smithy/*', '@sparticuz/chromium'];

/** esbuild options of every function, also used by the bundle test (test/cdk/bundles.test.ts). */
export const BUNDLING = {
  format: OutputFormat.ESM,
  target: 'node24',
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  externalModules: EXTERNAL_MODULES,
  inject: [path.join(ROOT, 'lambdas/adapters/aws/install.ts')],
  // CommonJS dependencies bundled into ESM still call require() for Node built-ins.
  banner: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  mainFields: ['module', 'main'],
};

export interface FunctionProps {
  /** Entry module, relative to lambdas/ (e.g. `http/run.ts`). */
  entry: string;
  stage: StageConfig;
  environment: Record<string, string>;
  memoryMb?: number;
  timeout?: Duration;
  architecture?: Architecture;
  layers?: ILayerVersion[];
  ephemeralStorageMb?: number;
  description?: string;
}

function retention(days: number): RetentionDays {
  const known = Object.values(RetentionDays).filter((v): v is RetentionDays => typeof v === 'number').sort((a, b) => a - b);
  return known.find((d) => d >= days) ?? RetentionDays.ONE_YEAR;
}

/** A function of this service, with its own log group. */
export function serviceFunction(scope: Construct, id: string, p: FunctionProps): NodejsFunction {
  const name = `${p.stage.prefix}-${id}`;
  const logGroup = new LogGroup(scope, `${id}Logs`, { logGroupName: `/aws/lambda/${name}`, retention: retention(p.stage.logRetentionDays), removalPolicy: p.stage.removalPolicy });
  return new NodejsFunction(scope, id, {
    functionName: name,
    description: p.description,
    entry: path.join(ROOT, 'lambdas', p.entry),
    handler: 'handler',
    runtime: Runtime.NODEJS_24_X,
    architecture: p.architecture ?? Architecture.ARM_64,
    memorySize: p.memoryMb ?? p.stage.apiMemoryMb,
    timeout: p.timeout ?? Duration.seconds(29),
    ephemeralStorageSize: p.ephemeralStorageMb ? Size.mebibytes(p.ephemeralStorageMb) : undefined,
    environment: { NODE_OPTIONS: '--enable-source-maps', ...p.environment },
    layers: p.layers,
    tracing: Tracing.ACTIVE,
    loggingFormat: LoggingFormat.JSON,
    logGroup,
    depsLockFilePath: path.join(ROOT, 'package-lock.json'),
    projectRoot: ROOT,
    bundling: BUNDLING,
  });
}
