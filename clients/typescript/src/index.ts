/**
 * @scrape-ai/client: the TypeScript client of the scrape-ai API (configs, jobs, results, tools, schedules, webhooks).
 * `new ScrapeAI({apiKey})` or `await ScrapeAI.login(email, password)`; errors are {@link ScrapeAIError} subclasses
 * (./errors.ts).
 */
export { ScrapeAI, DEFAULT_BASE_URL, USER_AGENT, WEBHOOK_EVENTS, parseRetryAfter } from './client.ts';
export type { ScrapeAIOptions, WaitForJobOptions } from './client.ts';
export {
  ScrapeAIError,
  AuthenticationError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  ValidationError,
  QuotaExceededError,
  RateLimitError,
  ServerError,
  NetworkError,
  JobTimeoutError,
  JobFailedError,
  errorFromResponse,
} from './errors.ts';
export type { ScrapeAIErrorOptions } from './errors.ts';
export type * from './types.ts';
