/**
 * What a completed run of a saved config changed against that config's previous completed run (issue 26,
 * docs/monitoring.md): rows added, removed and changed (./row-changes.ts), matched on the config's
 * `output.deduplicate_fields` when it names them, else on all values. The counts go on the job (`changes`, shown
 * by GET status); the rows go to the blob store (GET /api/v1/jobs/{id}/changes/). The previous run is the config's
 * last completed run the store recorded ({@link recordLastRun}, after each run completes), so finding it costs one
 * read on either store, however many jobs the account has.
 */
import { compareRows, type RowChanges } from './row-changes.ts';
import type { ConfigLastRun, JobChanges, JobRecord } from './ports.ts';
import type { Services } from './services.ts';
import { logger } from '../logger.ts';

/** Blob key of a run's changes (`{added, removed, changed, key_fields}` as JSON). */
export function changesKey(job: Pick<JobRecord, 'account_id' | 'id'>): string {
  return `changes/${job.account_id}/${job.id}.json`;
}

/**
 * Compares `rows` (this run's) with the rows of the config's last completed run and stores the changes.
 * @param keyFields `output.deduplicate_fields` of the config run, or null/empty to match on all values.
 * @returns the job's `changes`: for a first run (or one whose previous run's rows are gone), zero counts and
 *   `compared_with: null`.
 */
export async function computeRunChanges(svc: Pick<Services, 'store' | 'blobs'>, job: JobRecord, rows: readonly Record<string, unknown>[], keyFields: readonly string[] | null | undefined): Promise<JobChanges> {
  const key_fields = keyFields?.length ? [...keyFields] : null;
  const none: JobChanges = { added: 0, removed: 0, changed: 0, compared_with: null, key_fields, changes_key: null };
  if (!job.config_id) return none;
  const last = await svc.store.getConfigLastRun(job.account_id, job.config_id);
  if (!last || last.job_id === job.id) return none;
  const previous = await svc.store.getJob(job.account_id, last.job_id);
  const text = previous?.results_key ? await svc.blobs.get(previous.results_key) : null;
  if (!previous || !text) return none;
  // Both sides as stored (JSON): a NaN or an undefined read back from the previous run's blob is null, so this run's
  // rows are compared as they were saved, not as they are in memory.
  const stored = JSON.parse(JSON.stringify(rows)) as Record<string, unknown>[];
  const changes: RowChanges = compareRows(JSON.parse(text.toString('utf8')) as Record<string, unknown>[], stored, key_fields);
  const key = changesKey(job);
  await svc.blobs.put(key, JSON.stringify(changes), 'application/json');
  return { added: changes.added.length, removed: changes.removed.length, changed: changes.changed.length, compared_with: previous.id, key_fields, changes_key: key };
}

/**
 * Records a completed run as its config's last completed run (the next run's changes are computed against it).
 * A failure is logged, not thrown: the job is complete, and the next run then compares with the run before.
 */
export async function recordLastRun(svc: Pick<Services, 'store'>, job: JobRecord): Promise<void> {
  if (job.job_type !== 'run' || job.status !== 'completed' || !job.config_id || !job.completed_at) return;
  const run: ConfigLastRun = { job_id: job.id, completed_at: job.completed_at };
  try {
    await svc.store.setConfigLastRun(job.account_id, job.config_id, run);
  } catch (err) {
    logger.warn('could not record the last completed run of a config', { jobId: job.id, configId: job.config_id, error: err });
  }
}

/** A run's stored changes, or null when it has none (not a run of a saved config, first run, not completed). */
export async function readRunChanges(svc: Pick<Services, 'blobs'>, job: JobRecord): Promise<RowChanges | null> {
  if (!job.changes?.changes_key) return null;
  const text = await svc.blobs.get(job.changes.changes_key);
  return text ? JSON.parse(text.toString('utf8')) as RowChanges : null;
}

/** Kinds of change (GET /api/v1/jobs/{id}/changes/ `?change=`). */
export const CHANGE_KINDS = ['added', 'removed', 'changed'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** One entry of a changes page. */
export type ChangeEntry =
  | { change: 'added' | 'removed'; row: Record<string, unknown> }
  | { change: 'changed'; row: Record<string, unknown>; key: Record<string, unknown>; fields: Record<string, { old: unknown; new: unknown }> };

/**
 * The body of GET /api/v1/jobs/{id}/changes/ for a finished job: the counts, and changes `offset` to
 * `offset + limit` of the kind asked for (added first, then removed, then changed).
 */
export async function jobChangesPage(svc: Pick<Services, 'blobs'>, job: JobRecord, page: { change?: ChangeKind; offset: number; limit: number }) {
  const c = job.status === 'completed' ? job.changes : null;
  const stored = c ? await readRunChanges(svc, job) : null;
  const entries: ChangeEntry[] = [];
  if (stored) {
    const want = (k: ChangeKind) => !page.change || page.change === k;
    // Only the page is built: the slice bounds are computed over the three lists in order.
    const lists: Array<[ChangeKind, number]> = [['added', stored.added.length], ['removed', stored.removed.length], ['changed', stored.changed.length]];
    let skip = page.offset;
    for (const [kind, length] of lists) {
      if (!want(kind)) continue;
      const from = Math.min(skip, length);
      skip -= from;
      const to = Math.min(length, from + (page.limit - entries.length));
      for (let i = from; i < to; i++) {
        if (kind === 'changed') {
          const ch = stored.changed[i]!;
          entries.push({ change: 'changed', row: ch.row, key: ch.key, fields: ch.fields });
        } else entries.push({ change: kind, row: (kind === 'added' ? stored.added : stored.removed)[i]! });
      }
      if (entries.length >= page.limit) break;
    }
  }
  const counts = { added: c?.added ?? 0, removed: c?.removed ?? 0, changed: c?.changed ?? 0 };
  const message = job.status !== 'completed'
    ? `The job ${job.status === 'failed' ? 'failed' : 'was not completed'}: no changes`
    : job.job_type !== 'run' || !job.config_id
      ? 'Not a run of a saved config: changes are kept for runs of saved configs only'
      : !c?.compared_with
        ? "The config's first completed run (or its previous run's rows are gone): nothing to compare with"
        : `Compared with job ${c.compared_with}, matched on ${c.key_fields?.length ? c.key_fields.join(', ') : 'all values'}`;
  return {
    job_id: job.id,
    compared_with: c?.compared_with ?? null,
    key_fields: c?.key_fields ?? null,
    ...counts,
    total: page.change ? counts[page.change] : counts.added + counts.removed + counts.changed,
    offset: page.offset,
    limit: page.limit,
    results: entries,
    message,
  };
}
