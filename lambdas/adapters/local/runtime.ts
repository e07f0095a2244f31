/**
 * Wiring of the one-process service: settings from the environment, and the local adapters behind the
 * domain's ports. The HTTP thread and every worker thread call {@link createLocalServices} with the same
 * settings and get their own SQLite connection to the same files.
 *
 * Environment variables (README, "Environment"): PORT, HOST, DATA_DIR, SAI_BILLING (first start of a
 * DATA_DIR only: the variant is stored in it), SAI_SECRET, SAI_SECRET_FILE, SAI_OUTBOUND_ALLOW, SAI_WORKERS, SAI_PLANS_FILE,
 * SAI_JOB_TIMEOUT_MS, SAI_MAX_PAGES, SAI_MAX_RECEIVES, SAI_JOB_CONCURRENCY, SAI_BAD_REQUEST_LIMIT,
 * SAI_FAILED_LOGINS_PER_EMAIL, SAI_FAILED_LOGINS_PER_ADDRESS, SAI_TOOL_WORKERS, SAI_TOOL_SPARES, SAI_TOOL_QUEUE, SAI_TOOL_MEMORY_MB,
 * SAI_TOOL_DEADLINE_MS, SAI_EXPORT_THREADS, ANTHROPIC_API_KEY, ANTHROPIC_MODEL, ANTHROPIC_BASE_URL, SAI_PUBLIC_URL, and for tests SAI_CLOCK_FILE.
 * SAI_TOOL_DEADLINE_MS, SAI_PROXIES, SAI_PROXIES_FILE, ANTHROPIC_API_KEY, ANTHROPIC_MODEL, ANTHROPIC_BASE_URL, SAI_PUBLIC_URL, and for tests SAI_CLOCK_FILE.
 */
import { readerThreadCount } from './reader-pool.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { KeySealer } from '../../core/crypto.ts';
import { billingFromEnv, loadPlans, type Billing } from '../../core/plans.ts';
import { systemClock, type QueueMessage, type QueueName } from '../../core/ports.ts';
import { DEFAULT_THROTTLES } from '../../core/throttles.ts';
import type { AnthropicSettings, Services, ThrottleSettings } from '../../core/services.ts';
import { defaultToolSettings, TOOL_DEADLINE_MS, type ToolSettings } from '../../core/tools.ts';
import { OutboundGuard, parseAllowList } from '../../net/guard.ts';
import { parseProxyGroups } from '../../net/upstream.ts';
import { loadSealingSecret, prepareDataDir, type SealingSecret, type SecretRecord } from './data-dir.ts';
import { FileBlobStore } from './files.ts';
import { offsetClock } from './offset-clock.ts';
import { LocalQueue } from './queue.ts';
import { SqliteStore } from './sqlite-store.ts';

/** Everything the local service reads from its environment, with defaults applied. */
export interface LocalSettings {
  port: number;
  host: string;
  /** Absolute path of DATA_DIR. */
  dataDir: string;
  /** The variant stored in DATA_DIR (SAI_BILLING of its first start). */
  billing: Billing;
  /** The API-key sealing secret: SAI_SECRET, SAI_SECRET_FILE, or the DATA_DIR instance's file outside DATA_DIR (data-dir.ts). */
  secret: string;
  /** Where {@link secret} comes from. */
  secretSource: SealingSecret['source'];
  outboundAllow: string[];
  /** Concurrent jobs (worker threads). */
  workers: number;
  /**
   * SAI_WORKER_IDLE_MS: a job-worker thread with no message for this long ends, and threads start when messages wait
   * (./worker-pool.ts); 0 keeps every thread from the start. @default 60000
   */
  workerIdleMs: number;
  /**
   * SAI_READ_THREADS: reader threads of each job worker, where a run's pages are also read (./reader-pool.ts,
   * docs/limits.md); 0 reads on the job thread. @default two fewer than the cores, at most 4 (0 on 2 cores)
   */
  readThreads: number;
  plansFile?: string;
  /** ms. */
  jobTimeoutMs: number;
  maxPagesPerJob: number;
  maxReceives: number;
  jobConcurrency: number;
  throttles: ThrottleSettings;
  /**
   * The tool workers (core/tool-pool.ts) and the tools' deadline: SAI_TOOL_WORKERS threads (default
   * max(2, min(4, cores))), SAI_TOOL_SPARES spare threads (1), SAI_TOOL_QUEUE calls waiting (32), SAI_TOOL_MEMORY_MB heap per thread (512),
   * SAI_TOOL_DEADLINE_MS per call (25000), SAI_TOOL_IDLE_MS without a call before every thread ends (300000; 0 keeps them).
   */
  tools: ToolSettings;
  /** ANTHROPIC_API_KEY (with ANTHROPIC_MODEL, ANTHROPIC_BASE_URL): the generator's Claude agent; null without a key. */
  anthropic: AnthropicSettings | null;
  /** SAI_CLOCK_FILE: tests only, a file with a millisecond offset the service's clock runs ahead by (./offset-clock.ts). */
  clockFile?: string;
  /** SAI_PUBLIC_URL: the service's public base URL for absolute links in webhook payloads; without it the links are paths. */
  publicUrl?: string;
  /** SAI_EXPORT_THREADS: threads that make result exports, started when first needed (./export-threads.ts). @default min(2, cores) */
  exportThreads?: number;
  /** The operator's proxy groups as JSON text: SAI_PROXIES, or the file SAI_PROXIES_FILE names (checked at start). */
  proxiesText?: string;
}

function intEnv(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}; got "${raw}"`);
  return n;
}

/**
 * What DATA_DIR's database pins on its first use: the billing variant (docs/plans-and-metering.md: plans,
 * quotas and usage counters of one variant mean nothing in the other, so the variant belongs to the data;
 * the first process that opens a DATA_DIR, the service or the accounts CLI, stores `requested`, every later
 * one gets the stored variant), and the sealing secret, which lives outside DATA_DIR (data-dir.ts).
 */
function openDataDir(env: NodeJS.ProcessEnv, dataDir: string, requested: Billing): { billing: Billing; secret: SealingSecret } {
  prepareDataDir(dataDir);
  const store = new SqliteStore(databaseFile(dataDir));
  try {
    const billing = store.pinSetting('billing', requested) as Billing;
    return { billing, secret: loadSealingSecret(env, dataDir, secretRecord(store)) };
  } finally {
    store.close();
  }
}

/** What DATA_DIR's database keeps about its sealing secret (data-dir.ts). */
export function secretRecord(store: SqliteStore): SecretRecord {
  return {
    pinInstance: (fresh) => store.pinSetting('instance_id', fresh),
    fingerprint: () => store.getSetting('secret_fingerprint'),
    setFingerprint: (fp) => store.setSetting('secret_fingerprint', fp),
  };
}

/** What {@link settingsFromEnv} does with a SAI_BILLING that differs from the variant stored in DATA_DIR. */
export type BillingEnvPolicy =
  /** Refuse (the service: a start must not silently run another variant than the one it was asked for). */
  | 'must-match'
  /** Use DATA_DIR's variant (the accounts CLI: it acts on the service's data). */
  | 'data-dir-wins';

/**
 * Settings from the environment, and the billing variant of DATA_DIR (stored there on first use from
 * SAI_BILLING, `credits` when unset).
 * @throws Error naming the variable for any invalid value; with `must-match`, when SAI_BILLING is set and
 *   differs from the variant DATA_DIR was first started with.
 */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env, billingEnv: BillingEnvPolicy = 'must-match'): LocalSettings {
  const dataDir = path.resolve(env.DATA_DIR?.trim() || './data');
  const requested = env.SAI_BILLING?.trim() ? billingFromEnv(env) : null;
  const outboundAllow = parseAllowList(env.SAI_OUTBOUND_ALLOW);
  new OutboundGuard({ allow: outboundAllow }); // validates the entries now, not at the first job
  const port = intEnv(env, 'PORT', 8787, 0, 65535);
  const workers = intEnv(env, 'SAI_WORKERS', Math.max(1, Math.min(4, os.availableParallelism())), 1, 64);
  const workerIdleMs = intEnv(env, 'SAI_WORKER_IDLE_MS', 60_000, 0, 24 * 3600_000);
  const readThreads = intEnv(env, 'SAI_READ_THREADS', readerThreadCount(os.availableParallelism(), undefined), 0, 16);
  const jobTimeoutMs = intEnv(env, 'SAI_JOB_TIMEOUT_MS', 15 * 60_000, 1000, 24 * 3600_000);
  const maxPagesPerJob = intEnv(env, 'SAI_MAX_PAGES', 1000, 1, 100_000);
  const maxReceives = intEnv(env, 'SAI_MAX_RECEIVES', 3, 1, 100);
  const jobConcurrency = intEnv(env, 'SAI_JOB_CONCURRENCY', 4, 1, 64);
  const throttles: ThrottleSettings = {
    badRequestsPerWindow: intEnv(env, 'SAI_BAD_REQUEST_LIMIT', DEFAULT_THROTTLES.badRequestsPerWindow, 0, 1e9),
    failedLoginsPerEmail: intEnv(env, 'SAI_FAILED_LOGINS_PER_EMAIL', DEFAULT_THROTTLES.failedLoginsPerEmail, 0, 1e9),
    failedLoginsPerAddress: intEnv(env, 'SAI_FAILED_LOGINS_PER_ADDRESS', DEFAULT_THROTTLES.failedLoginsPerAddress, 0, 1e9),
  };
  const toolDefaults = defaultToolSettings({});
  const tools: ToolSettings = {
    size: intEnv(env, 'SAI_TOOL_WORKERS', toolDefaults.size, 1, 64),
    maxWaiting: intEnv(env, 'SAI_TOOL_QUEUE', toolDefaults.maxWaiting, 0, 10_000),
    memoryMb: intEnv(env, 'SAI_TOOL_MEMORY_MB', toolDefaults.memoryMb, 64, 16_384),
    spares: intEnv(env, 'SAI_TOOL_SPARES', toolDefaults.spares ?? 1, 0, 8),
    deadlineMs: intEnv(env, 'SAI_TOOL_DEADLINE_MS', TOOL_DEADLINE_MS, 2_000, TOOL_DEADLINE_MS),
    idleMs: intEnv(env, 'SAI_TOOL_IDLE_MS', 300_000, 0, 24 * 3600_000),
  };
  const exportThreads = intEnv(env, 'SAI_EXPORT_THREADS', Math.max(1, Math.min(2, os.availableParallelism())), 1, 16);
  const plansFile = env.SAI_PLANS_FILE?.trim() ? path.resolve(env.SAI_PLANS_FILE.trim()) : undefined;
  // Only once every variable is valid does DATA_DIR get its files (database with the variant, secret).
  const { billing, secret } = openDataDir(env, dataDir, requested ?? billingFromEnv({}));
  if (requested && requested !== billing && billingEnv === 'must-match') {
    throw new Error(`DATA_DIR ${dataDir} was first started with SAI_BILLING=${billing}: its accounts, plans and usage are of that variant, and SAI_BILLING=${requested} would mix the two. `
      + `Start without SAI_BILLING (or with SAI_BILLING=${billing}) to use this DATA_DIR, or point DATA_DIR at a new folder for the ${requested} variant and create its accounts there (npm run accounts -- create …)`);
  }
  loadPlans(billing, plansFile); // fail at start-up on a bad plans file
  const proxiesFile = env.SAI_PROXIES_FILE?.trim();
  const proxiesText = env.SAI_PROXIES?.trim() || (proxiesFile ? fs.readFileSync(path.resolve(proxiesFile), 'utf8') : '');
  parseProxyGroups(proxiesText, env.SAI_PROXIES?.trim() ? 'SAI_PROXIES' : 'SAI_PROXIES_FILE'); // fail at start-up on a bad declaration
  return {
    ...(proxiesText ? { proxiesText } : {}),
    port,
    host: env.HOST?.trim() || '127.0.0.1',
    dataDir,
    billing,
    secret: secret.value,
    secretSource: secret.source,
    outboundAllow,
    workers,
    workerIdleMs,
    readThreads,
    ...(plansFile ? { plansFile } : {}),
    jobTimeoutMs,
    maxPagesPerJob,
    maxReceives,
    jobConcurrency,
    throttles,
    tools,
    exportThreads,
    anthropic: env.ANTHROPIC_API_KEY?.trim()
      ? { apiKey: env.ANTHROPIC_API_KEY.trim(), ...(env.ANTHROPIC_MODEL?.trim() ? { model: env.ANTHROPIC_MODEL.trim() } : {}), ...(env.ANTHROPIC_BASE_URL?.trim() ? { baseURL: env.ANTHROPIC_BASE_URL.trim() } : {}) }
      : null,
    ...(env.SAI_CLOCK_FILE?.trim() ? { clockFile: path.resolve(env.SAI_CLOCK_FILE.trim()) } : {}),
    ...(env.SAI_PUBLIC_URL?.trim() ? { publicUrl: env.SAI_PUBLIC_URL.trim().replace(/\/+$/, '') } : {}),
  };
}

/** The local adapters of one thread, with handles the runtime needs beyond the ports. */
export interface LocalServices {
  services: Services;
  store: SqliteStore;
  queue: LocalQueue;
  close(): void;
}

/** Path of the SQLite database in DATA_DIR. */
export function databaseFile(dataDir: string): string {
  return path.join(dataDir, 'scrape-ai.db');
}

/** Opens the local adapters for one thread. */
export function createLocalServices(s: LocalSettings): LocalServices {
  const store = new SqliteStore(databaseFile(s.dataDir));
  const sealer = new KeySealer(s.secret);
  const queue = new LocalQueue(store.db, { maxReceives: s.maxReceives });
  const proxies = parseProxyGroups(s.proxiesText);
  const services: Services = {
    store,
    queue,
    blobs: new FileBlobStore(path.join(s.dataDir, 'blobs')),
    clock: s.clockFile ? offsetClock(s.clockFile) : systemClock,
    sealer: async () => sealer,
    plans: loadPlans(s.billing, s.plansFile),
    guard: new OutboundGuard({ allow: s.outboundAllow }),
    usageKeys: null,
    maxReceives: s.maxReceives,
    jobTimeoutMs: s.jobTimeoutMs,
    maxPagesPerJob: s.maxPagesPerJob,
    jobConcurrency: s.jobConcurrency,
    throttles: s.throttles,
    anthropic: async () => s.anthropic,
    proxies: async () => proxies,
    ...(s.publicUrl ? { publicUrl: s.publicUrl } : {}),
  };
  return {
    services,
    store,
    queue,
    close: () => {
      queue.close();
      store.close();
    },
  };
}

/** Visibility timeout of a job message: above the job's time limit, as for the SQS queue in the cloud. */
export function visibilityTimeoutMs(s: LocalSettings): number {
  return s.jobTimeoutMs + 60_000;
}

/** Local messages as the SQS event Lambda would deliver (event source mapping, batch of records). */
export function toSqsEvent(queue: QueueName, messages: QueueMessage[]): SQSEvent {
  const arn = `arn:aws:sqs:local:000000000000:scrape-ai-${queue}`;
  return {
    Records: messages.map((m): SQSRecord => ({
      messageId: m.id,
      receiptHandle: m.receipt,
      body: m.body,
      attributes: {
        ApproximateReceiveCount: String(m.receiveCount),
        SentTimestamp: String(Date.now()),
        SenderId: 'local',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'local',
    })),
  };
}
