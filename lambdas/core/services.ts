/**
 * The bundle of ports the domain works with, and the one place a deployment installs it.
 *
 * The local service (adapters/local/server.ts) installs the local adapters (SQLite, the local queue,
 * files); the AWS entry points install DynamoDB, SQS and S3. Handlers and workers call {@link services}; they never import an adapter.
 */
import type { OutboundGuard } from '../net/guard.ts';
import type { PageReaders } from '../engine/crawl/page-reader.ts';
import type { ProxyGroups } from '../net/upstream.ts';
import type { BrowserTools } from './browser-tools.ts';
import type { ExportBuilder } from './ports.ts';
import type { KeySealer } from './crypto.ts';
import type { PlanCatalog } from './plans.ts';
import type { BlobStore, Clock, ConfigParser, JobQueue, ScheduleTriggers, Store, UsageKeys } from './ports.ts';

/** The Claude agent's settings (docs/generate.md): without them, configs are generated without an LLM. */
export interface AnthropicSettings {
  apiKey: string;
  /** `ANTHROPIC_MODEL`; the agent's default when absent. */
  model?: string;
  /** `ANTHROPIC_BASE_URL`: another endpoint speaking the Messages API (a local stub in tests). */
  baseURL?: string;
}

/** The limits of the throttles, per window of core/throttles.ts (15 minutes). 0 turns a throttle off. */
export interface ThrottleSettings {
  /** Refused calls with a body (400, 403, 413) per account. @default 100 */
  badRequestsPerWindow: number;
  /** Failed logins per email. @default 10 */
  failedLoginsPerEmail: number;
  /** Failed logins per client address. @default 100 */
  failedLoginsPerAddress: number;
}

export interface Services {
  store: Store;
  queue: JobQueue;
  blobs: BlobStore;
  clock: Clock;
  /** The API-key sealer; async and lazy, so only the functions that seal or open keys read the secret. */
  sealer: () => Promise<KeySealer>;
  plans: PlanCatalog;
  guard: OutboundGuard;
  /**
   * The platform's schedule triggers (EventBridge Scheduler on AWS); null or absent locally, where the service's
   * firing loop reads the store (issue 26).
   */
  scheduleTriggers?: ScheduleTriggers | null;
  /**
   * The service's public base URL (`https://api.example.com`, no trailing slash), for absolute links in webhook
   * payloads; absent: the payloads' links are paths (`/api/v1/jobs/…`).
   */
  publicUrl?: string;
  /** Per-account API Gateway usage keys (cloud); null locally. */
  usageKeys: UsageKeys | null;
  /** Deliveries of a job message before it goes to the dead-letter queue (SQS maxReceiveCount). */
  maxReceives: number;
  /** Wall-clock limit of one run job, ms. */
  jobTimeoutMs: number;
  /** Page limit of one run job. */
  maxPagesPerJob: number;
  /** Concurrent page fetches within one run job. */
  jobConcurrency: number;
  /**
   * Where a run job's pages are read into rows, when not only on the job's own thread: the local service's job
   * workers read on reader threads too (adapters/local/reader-pool.ts). Absent: on the job's thread (Lambda, tests).
   */
  pageReaders?: PageReaders;
  /**
   * Where config text is parsed, when not on the calling thread: the local service's HTTP thread sends
   * large texts to a worker thread. Absent: inline (Lambda, job workers, tests).
   */
  configParser?: ConfigParser;
  /**
   * Where the tools drive Chromium (the screenshot, tech-detector's rendered load), when not on the calling thread:
   * the local service's HTTP thread sends that work to a browser thread (core/browser-tools.ts). Absent: inline
   * (Lambda, where a tool's function serves one call at a time, and tests).
   */
  browserTools?: BrowserTools;
  /**
   * Where result exports (`/results/?format=`) are made, when not on the calling thread: the local service's HTTP
   * thread sends them to export threads (core/exports.ts). Absent: inline (Lambda, tests).
   */
  exportBuilder?: ExportBuilder;
  /** Limits on refused calls: bad requests per account, failed logins per email and per address (core/throttles.ts). */
  throttles: ThrottleSettings;
  /**
   * The Claude agent's settings, read on first use (on AWS from Secrets Manager); null or absent: no agent,
   * configs are generated without an LLM.
   */
  anthropic?: () => Promise<AnthropicSettings | null>;
  /**
   * The operator's upstream proxy groups (docs/crawler.md, "Upstream proxies"): locally SAI_PROXIES or SAI_PROXIES_FILE,
   * on AWS a Secrets Manager secret (PROXIES_SECRET_ARN), read on first use. Absent: none.
   */
  proxies?: () => Promise<ProxyGroups>;
}

let installed: Services | null = null;
let factory: (() => Services | Promise<Services>) | null = null;

/** Installs the services of this process (once at start-up; tests may install again). */
export function installServices(s: Services): void {
  installed = s;
}

/** Registers a lazy factory, used on first {@link services} call (Lambda cold start). */
export function installServicesFactory(f: () => Services | Promise<Services>): void {
  factory = f;
}

/** The services of this process. @throws Error when none were installed. */
export async function services(): Promise<Services> {
  if (installed) return installed;
  if (factory) {
    installed = await factory();
    return installed;
  }
  throw new Error('no services installed: call installServices() at start-up');
}
