/**
 * The one-process service (`npm start`): a small stand-in for API Gateway, SQS and Lambda around the
 * very same handlers the cloud runs.
 *
 * - HTTP: node:http; each request is matched against the route table (lambdas/routes.ts), turned into an
 *   API Gateway REST proxy event, authorized by lambdas/authorizer (as API Gateway would), and passed to
 *   the route's middy handler; the proxy result is written back.
 * - Jobs: `workers` worker threads consume the run queue (lambdas/adapters/local/worker-thread.ts); a
 *   dead-letter consumer ends jobs the queue gave up on.
 * - Recovery: on start, messages in flight when the last process died are released at once, and any
 *   unfinished job without a message gets one, so every job ends `completed` or `failed`.
 */
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { routes, pathMatcher, type RouteDef } from '../../routes.ts';
import { errorResult, MAX_BODY_BYTES, type ApiResult } from '../../http/middleware.ts';
import { handler as authorize } from '../../authorizer/handler.ts';
import { handler as deadLetterHandler } from '../../workers/dead-letter.ts';
import { installServices } from '../../core/services.ts';
import { UNFINISHED } from '../../core/jobs.ts';
import { JOB_WORKER_RESOURCE_LIMITS } from './limits.ts';
import { createLocalServices, toSqsEvent, type LocalServices, type LocalSettings } from './runtime.ts';
import type { WorkerReport } from './worker-thread.ts';

type Handler = (event: APIGatewayProxyEvent, context: Context) => Promise<ApiResult>;

interface LoadedRoute {
  def: RouteDef;
  matcher: RegExp;
  handler: Handler;
}

/** A running local service. */
export interface LocalService {
  /** e.g. `http://127.0.0.1:8787` */
  url: string;
  local: LocalServices;
  /** Stops accepting requests, stops the workers (their jobs resume on the next start) and closes the store. */
  close(): Promise<void>;
}

async function loadRoutes(): Promise<LoadedRoute[]> {
  return Promise.all(routes.map(async (def) => {
    const mod = (await import(new URL(`../../${def.handler}`, import.meta.url).href)) as { handler: Handler };
    return { def, matcher: pathMatcher(def.path), handler: mod.handler };
  }));
}

function lambdaContext(requestId: string, functionName: string): Context {
  const deadline = Date.now() + 29_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

function readBody(req: http.IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        resolve('too_large');
        req.resume();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Builds the API Gateway REST proxy event for a request (https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html). */
function toEvent(req: http.IncomingMessage, url: URL, route: LoadedRoute, params: Record<string, string>, body: string, requestId: string): APIGatewayProxyEvent {
  const headers: Record<string, string> = {};
  const multiValueHeaders: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined) continue;
    const values = Array.isArray(v) ? v : [v];
    headers[k] = values.join(', ');
    multiValueHeaders[k] = values;
  }
  const query: Record<string, string> = {};
  const multiQuery: Record<string, string[]> = {};
  for (const [k, v] of url.searchParams) {
    query[k] = v;
    (multiQuery[k] ??= []).push(v);
  }
  const hasQuery = Object.keys(query).length > 0;
  return {
    resource: route.def.path,
    path: url.pathname,
    httpMethod: req.method ?? 'GET',
    headers,
    multiValueHeaders,
    queryStringParameters: hasQuery ? query : null,
    multiValueQueryStringParameters: hasQuery ? multiQuery : null,
    pathParameters: Object.keys(params).length ? params : null,
    stageVariables: null,
    body: body === '' ? null : body,
    isBase64Encoded: false,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      authorizer: null,
      httpMethod: req.method ?? 'GET',
      identity: {
        accessKey: null, accountId: null, apiKey: null, apiKeyId: null, caller: null, clientCert: null,
        cognitoAuthenticationProvider: null, cognitoAuthenticationType: null, cognitoIdentityId: null,
        cognitoIdentityPoolId: null, principalOrgId: null, sourceIp: req.socket.remoteAddress ?? '127.0.0.1',
        user: null, userAgent: req.headers['user-agent'] ?? null, userArn: null,
      },
      path: url.pathname,
      protocol: `HTTP/${req.httpVersion}`,
      requestId,
      requestTimeEpoch: Date.now(),
      resourceId: route.def.path,
      resourcePath: route.def.path,
      stage: 'local',
    },
  };
}

function send(res: http.ServerResponse, result: ApiResult, requestId: string): void {
  const headers: Record<string, string | number | boolean> = { ...(result.headers ?? {}), 'x-request-id': requestId };
  res.writeHead(result.statusCode, headers as http.OutgoingHttpHeaders);
  res.end(result.isBase64Encoded ? Buffer.from(result.body, 'base64') : result.body);
}

const CORS_PREFLIGHT = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, DELETE, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type',
  'Access-Control-Max-Age': '600',
};

/** Handles one HTTP request the way API Gateway with its authorizer would. */
async function dispatch(loaded: LoadedRoute[], req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const requestId = randomUUID();
  const started = performance.now();
  let status = 500;
  try {
    const url = new URL(req.url ?? '/', 'http://local');
    const candidates = loaded.map((r) => ({ r, m: r.matcher.exec(url.pathname) })).filter((x) => x.m);
    if (req.method === 'OPTIONS' && candidates.length) {
      status = 204;
      res.writeHead(204, CORS_PREFLIGHT).end();
      return;
    }
    const hit = candidates.find((x) => x.r.def.method === req.method);
    if (!hit) {
      const result = candidates.length
        ? errorResult('method_not_allowed', `${req.method} is not allowed on ${url.pathname}; allowed: ${candidates.map((x) => x.r.def.method).join(', ')}`, [], { Allow: candidates.map((x) => x.r.def.method).join(', ') })
        : errorResult('not_found', `No route ${req.method} ${url.pathname}; the API lives under /api/v1/ (see README)`);
      status = result.statusCode;
      send(res, result, requestId);
      return;
    }
    const body = await readBody(req);
    if (body === 'too_large') {
      const result = errorResult('payload_too_large', `The request body is larger than the limit of ${MAX_BODY_BYTES} bytes`);
      status = result.statusCode;
      send(res, result, requestId);
      return;
    }
    let params: Record<string, string>;
    try {
      params = Object.fromEntries(Object.entries(hit.m!.groups ?? {}).map(([k, v]) => [k, decodeURIComponent(v)]));
    } catch {
      // A malformed %-escape names no resource (docs/decisions.md: ids that are not UUIDs are 404).
      const result = errorResult('not_found', `No resource at ${url.pathname}`);
      status = result.statusCode;
      send(res, result, requestId);
      return;
    }
    const event = toEvent(req, url, hit.r, params, body.toString('utf8'), requestId);
    if (hit.r.def.auth) {
      try {
        const auth = await authorize({ type: 'TOKEN', authorizationToken: event.headers.authorization ?? '', methodArn: `arn:aws:execute-api:local:000000000000:local/local/${req.method}${url.pathname}` });
        event.requestContext.authorizer = { principalId: auth.principalId, ...auth.context };
      } catch (err) {
        if ((err as Error).message !== 'Unauthorized') throw err;
        const result = errorResult('unauthorized', event.headers.authorization
          ? 'Invalid API key: it is malformed, unknown or was replaced'
          : 'Missing API key: send Authorization: Bearer sai_…');
        status = result.statusCode;
        send(res, result, requestId);
        return;
      }
    }
    const result = await hit.r.handler(event, lambdaContext(requestId, hit.r.def.handler));
    status = result.statusCode;
    send(res, result, requestId);
  } catch (err) {
    console.error(JSON.stringify({ level: 'error', message: 'request failed', requestId, error: (err as Error).stack }));
    if (!res.headersSent) send(res, errorResult('internal_error', `Internal error; quote request id ${requestId} when reporting it`), requestId);
    else res.destroy();
  } finally {
    if (process.env.SAI_ACCESS_LOG !== '0') {
      console.log(JSON.stringify({ t: new Date().toISOString(), method: req.method, path: req.url, status, ms: Math.round(performance.now() - started) }));
    }
  }
}

/** Time past a job's limit before the watchdog steps in: the job's own timer gets the first chance. */
function watchdogGraceMs(s: LocalSettings): number {
  return Math.min(30_000, Math.max(1000, s.jobTimeoutMs / 2));
}

/** Keeps one job-worker thread alive and knows which message it holds. */
class WorkerSlot {
  private worker: Worker | null = null;
  /** The message this worker works on, and since when (ms). */
  private holding: { receipt: string; jobId: string | null; since: number } | null = null;
  /** Chromium processes this worker started: killed when the worker dies or the service stops. */
  private browsers = new Set<number>();
  private stopped = false;
  private readonly settings: LocalSettings;
  private readonly local: LocalServices;
  private readonly index: number;

  constructor(settings: LocalSettings, local: LocalServices, index: number) {
    this.settings = settings;
    this.local = local;
    this.index = index;
  }

  start(): void {
    const w = new Worker(new URL('./worker-thread.ts', import.meta.url), {
      workerData: this.settings,
      name: `job-worker-${this.index}`,
      // A run that allocates without bound ends this thread, not the service.
      resourceLimits: { ...JOB_WORKER_RESOURCE_LIMITS },
    });
    w.on('message', (m: WorkerReport) => {
      if (m.type === 'holding') this.holding = { receipt: m.receipt, jobId: m.jobId, since: Date.now() };
      else if (m.type === 'idle') this.holding = null;
      else if (m.type === 'browser') this.browsers.add(m.pid);
    });
    w.on('error', (err) => console.error(JSON.stringify({ level: 'error', message: `job worker ${this.index} crashed`, error: err.stack })));
    w.on('exit', () => {
      this.worker = null;
      this.killBrowsers();
      if (this.holding) {
        // A clean stop gives the message back as it was: the job resumes at the next start, no attempt spent.
        // A dead worker's message is visible again at once: the next delivery retries or dead-letters it.
        if (this.stopped) this.local.queue.release(this.holding.receipt);
        else this.local.queue.changeVisibility(this.holding.receipt, 0);
      }
      this.holding = null;
      if (!this.stopped) setTimeout(() => { if (!this.stopped) this.start(); }, 500).unref();
    });
    this.worker = w;
  }

  /**
   * The watchdog: a job whose thread is busy past its time limit (a regular expression that backtracks
   * for ever, a page the engine cannot leave) cannot be stopped from inside, because the thread's own
   * timer never runs. The thread is terminated, the job ends `failed`, and a fresh thread takes over.
   */
  async enforceTimeLimit(now: number): Promise<void> {
    const h = this.holding;
    if (!h || !this.worker || now - h.since < this.settings.jobTimeoutMs + watchdogGraceMs(this.settings)) return;
    this.holding = null;
    console.error(JSON.stringify({ level: 'error', message: 'job worker stuck past the time limit; restarting it', jobId: h.jobId, worker: this.index }));
    if (h.jobId) {
      await this.local.store.updateJob(h.jobId, ['pending', 'running'], {
        status: 'failed',
        completed_at: new Date().toISOString(),
        status_message: `job_timeout: the run did not stop at the limit of ${Math.round(this.settings.jobTimeoutMs / 1000)} s per job (a page or a pattern kept the worker busy) and its worker was restarted`,
      });
    }
    this.local.queue.delete(h.receipt);
    await this.worker.terminate();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const w = this.worker;
    if (w) await w.terminate();
    this.killBrowsers();
  }

  /** Chromium runs in its own process group (puppeteer starts it detached): end the whole group. */
  private killBrowsers(): void {
    for (const pid of this.browsers) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        try { process.kill(pid, 'SIGKILL'); } catch { /* already gone */ }
      }
    }
    this.browsers.clear();
  }
}

/**
 * Starts the local service on its settings: store, queue, workers, HTTP.
 * @throws Error when DATA_DIR is in use by another running service, or the port is taken.
 */
export async function startLocalService(settings: LocalSettings): Promise<LocalService> {
  fs.mkdirSync(settings.dataDir, { recursive: true });
  const lock = acquireLock(settings.dataDir);
  const local = createLocalServices(settings);
  installServices(local.services);

  // Recovery: whatever the last process held is free again, and every unfinished job has a message.
  const released = local.queue.releaseInFlight();
  const queued = new Set(local.queue.allBodies('run').map((b) => { try { return (JSON.parse(b) as { job_id: string }).job_id; } catch { return ''; } }));
  local.store.deleteExpiredCounters();
  let requeued = 0;
  for (const job of await local.store.listJobsByStatus(UNFINISHED)) {
    if (job.job_type === 'run' && !queued.has(job.id)) {
      await local.queue.send('run', JSON.stringify({ job_id: job.id }));
      requeued++;
    }
  }
  if (released || requeued) console.log(`recovered: ${released} job message(s) in flight at the last stop released, ${requeued} job(s) queued again`);

  const slots = Array.from({ length: settings.workers }, (_, i) => new WorkerSlot(settings, local, i + 1));
  slots.forEach((s) => s.start());

  const watchdog = setInterval(() => { for (const s of slots) void s.enforceTimeLimit(Date.now()); }, Math.min(5_000, watchdogGraceMs(settings)));
  watchdog.unref();

  const deadLetterTimer = setInterval(() => {
    const messages = local.queue.receiveDead('run', 10, 60_000);
    if (!messages.length) return;
    deadLetterHandler(toSqsEvent('run', messages)).then(
      () => messages.forEach((m) => local.queue.delete(m.receipt)),
      (err: Error) => console.error(JSON.stringify({ level: 'error', message: 'dead-letter handler failed', error: err.stack })),
    );
  }, 1000);
  deadLetterTimer.unref();

  const loaded = await loadRoutes();
  const server = http.createServer((req, res) => { void dispatch(loaded, req, res); });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(settings.port, settings.host, () => resolve());
  });
  const addr = server.address() as { port: number };
  const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
  const url = `http://${host}:${addr.port}`;

  let closing: Promise<void> | null = null;
  return {
    url,
    local,
    close: () => closing ??= (async () => {
      clearInterval(deadLetterTimer);
      clearInterval(watchdog);
      await new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); });
      await Promise.all(slots.map((s) => s.stop()));
      local.close();
      lock.release();
    })(),
  };
}

/** One service per DATA_DIR: a lock file with the owner's pid; a lock left by a dead process is taken over. */
function acquireLock(dataDir: string): { release(): void } {
  const file = path.join(dataDir, 'service.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return { release: () => { try { if (fs.readFileSync(file, 'utf8') === String(process.pid)) fs.rmSync(file); } catch { /* already gone */ } } };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(fs.readFileSync(file, 'utf8'));
      if (pid && pid !== process.pid && isAlive(pid)) {
        throw new Error(`DATA_DIR ${dataDir} is in use by another scrape-ai service (pid ${pid}); stop it or use another DATA_DIR`);
      }
      fs.rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock ${file}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
