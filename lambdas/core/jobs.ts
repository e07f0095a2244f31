/**
 * Jobs: the views of SPEC.md ("Job"), where a job's rows are kept, and the end of a job the queue gave
 * up on. The state machine, which every change of a job's state goes through, is core/job-states.ts.
 */
import { FINISHED, transitionJob } from './job-states.ts';
import type { JobRecord, JobType } from './ports.ts';
import type { Services } from './services.ts';
import type { Row } from '../engine/extract.ts';

/** Rows included in the status response's `results.data`; all rows are at /results/ (docs/api.md). */
export const STATUS_ROWS_PREVIEW = 100;

/** Blob key of a job's rows: one per attempt, so a stale attempt never overwrites the winner's rows. */
export function resultsKey(job: Pick<JobRecord, 'account_id' | 'id'>, attempt: number): string {
  return `results/${job.account_id}/${job.id}/${attempt}.json`;
}

/** Blob key of the first {@link STATUS_ROWS_PREVIEW} rows, next to the rows: status polls read only this. */
export function previewKey(resultsKey: string): string {
  return resultsKey.replace(/\.json$/, '.preview.json');
}

/** The 202 body of POST /run/ and /generate/ (SPEC.md). */
export function jobCreatedView(job: JobRecord): Record<string, unknown> {
  const out: Record<string, unknown> = { id: job.id, status: job.status, progress: job.progress, job_type: job.job_type };
  if (job.job_type === 'generate') Object.assign(out, { target_url: job.target_url, created_at: job.created_at });
  return out;
}

function summary(job: JobRecord): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: job.id,
    status: job.status,
    progress: job.progress,
    job_type: job.job_type as JobType,
    target_url: job.target_url,
    status_message: job.status_message,
    items_found: job.items_found,
    pages_scraped: job.pages_scraped,
    api_discovered: job.api_discovered,
    created_at: job.created_at,
  };
  if (job.completed_at) out.completed_at = job.completed_at;
  return out;
}

/** A GET /jobs/ item: the job without results and YAML. */
export function jobListItem(job: JobRecord): Record<string, unknown> {
  return summary(job);
}

/** A completed job's rows as the stored JSON text (no parsing: /results/ passes it through); null when none. */
export async function rowsJson(svc: Services, job: JobRecord): Promise<string | null> {
  if (job.status !== 'completed' || !job.results_key) return null;
  return (await svc.blobs.get(job.results_key))?.toString('utf8') ?? null;
}

/** The first rows of a completed job, for the status response (the preview blob; the rows for older jobs). */
async function previewRows(svc: Services, job: JobRecord): Promise<Row[]> {
  if (job.status !== 'completed' || !job.results_key) return [];
  const raw = (await svc.blobs.get(previewKey(job.results_key))) ?? (await svc.blobs.get(job.results_key));
  return raw ? (JSON.parse(raw.toString('utf8')) as Row[]).slice(0, STATUS_ROWS_PREVIEW) : [];
}

/** GET /jobs/{id}/status/: every field of SPEC.md's job. */
export async function jobStatusView(svc: Services, job: JobRecord): Promise<Record<string, unknown>> {
  return {
    ...summary(job),
    results: { data: await previewRows(svc, job), row_count: job.status === 'completed' ? job.row_count : 0 },
    yaml_config: { id: job.config_id, yaml_content: job.yaml_content },
  };
}

/**
 * A message the queue gave up on (it reached the maximum receives: the worker crashed, timed out or ran
 * out of memory each time). Ends its job `failed` with that reason (the `dead_letter` transition).
 */
export async function deadLetter(svc: Services, jobId: string, receiveCount: number): Promise<void> {
  const job = await svc.store.getJobById(jobId);
  if (!job || FINISHED.includes(job.status)) return;
  await transitionJob(svc, job, 'dead_letter', {
    status_message: `worker_lost: the job was attempted ${receiveCount} time(s) and the worker stopped before finishing each time (crash, time-out or out of memory); it was moved to the dead-letter queue`,
  }, { by: 'dead_letter_consumer' });
}
