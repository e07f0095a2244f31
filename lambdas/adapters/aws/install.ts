/**
 * Injected at the top of every Lambda bundle (esbuild `inject`, lib/lambda.ts): the handlers call
 * `services()`, and in the cloud that builds the AWS services on first use (cold start).
 */
import { installServicesFactory } from '../../core/services.ts';
import { createAwsServices } from './services.ts';

installServicesFactory(() => createAwsServices(process.env));
