/**
 * The service's one structured logger: AWS Powertools for Lambda (TypeScript) Logger
 * (https://docs.powertools.aws.dev/lambda/typescript/latest/core/logger/). Every line is one JSON object
 * with `level`, `message`, `timestamp`, `service` (`scrape-ai`) and the keys passed with the call; on
 * Lambda the API handlers add the invocation's context (function name, request id, cold start) through
 * Powertools' `injectLambdaContext` middleware (lambdas/http/middleware.ts).
 *
 * Level: `POWERTOOLS_LOG_LEVEL`, else `LOG_LEVEL` (`DEBUG`, `INFO`, `WARN`, `ERROR`, `SILENT`; default
 * `INFO`), read by Powertools itself; Lambda's advanced logging controls (`AWS_LAMBDA_LOG_LEVEL`) win over
 * both. Powertools writes `debug` and `info` to stdout and `warn` and `error` to stderr, as Lambda's own
 * console does; both reach CloudWatch on Lambda and the terminal locally.
 *
 * Human-facing output of the command-line tools (bin/) is plain text, not this logger.
 *
 * **Example usage:**
 * ```ts
 * logger.error('run attempt failed', { jobId, attempt, error: err });
 * ```
 */
import { Logger } from '@aws-lambda-powertools/logger';

/** The process's logger (one per thread: each worker thread loads its own copy of this module). */
export const logger = new Logger({ serviceName: 'scrape-ai' });
