/**
 * What a completed run of a saved config changed against that config's previous completed run (issue 26,
 * docs/monitoring.md): rows added, removed and changed (./row-changes.ts), matched on the config's
 * `output.deduplicate_fields` when it names them, else on all values. The counts go on the job (`changes`, shown
 * by GET status); the entries go to the blob store in chunks of {@link CHANGES_CHUNK} per kind, so that a page of
 * GET /api/v1/jobs/{id}/changes/ reads and parses at most two small blobs on the thread that answers HTTP, however
 * large the result (10,000 changed rows are 10 chunks). The previous run is the config's
 * last completed run the store recorded ({@link recordLastRun}, after each run completes), so finding it costs one
 * read on either store, however many jobs the account has.
 */
import { compareRows, type RowChanges } from './row-changes.ts';
import type { ConfigLastRun, JobChanges, JobRecord } from './ports.ts';
import type { Services } from './services.ts';
import { logger } from '../logger.ts';

/** Entries per stored chunk of one kind of change (also the most a page of the changes endpoint returns). */
export const CHANGES_CHUNK = 1000;

/** Blob key prefix of a run's changes: chunk `n` of a kind is `<prefix><kind>/<n>.json`, a JSON array of entries. */
export function changesKey(job: Pick<JobRecord, 'account_id' | 'id'>): string {
  return `changes/${job.account_id}/${job.id}/`;
}

const chunkKey = (prefix: string, kind: ChangeKind, n: number) => `${prefix}${kind}/${n}.json`;

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
  const entries: Record<ChangeKind, ChangeEntry[]> = {
    added: changes.added.map((row) => ({ change: 'added', row })),
    removed: changes.removed.map((row) => ({ change: 'removed', row })),
    changed: changes.changed.map((c) => ({ change: 'changed', row: c.row, key: c.key, fields: c.fields })),
  };
  for (const kind of CHANGE_KINDS) {
    for (let n = 0; n * CHANGES_CHUNK < entries[kind].length; n++) {
      await svc.blobs.put(chunkKey(key, kind, n), JSON.stringify(entries[kind].slice(n * CHANGES_CHUNK, (n + 1) * CHANGES_CHUNK)), 'application/json');
    }
  }
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
  const entries: ChangeEntry[] = [];
  if (c?.changes_key) {
    // The kinds asked for, in order, as one list: skip `offset`, then read chunk by chunk until the page is full.
    let skip = page.offset;
    for (const kind of CHANGE_KINDS) {
      if (page.change && page.change !== kind) continue;
      const length = c[kind];
      const from = Math.min(skip, length);
      skip -= from;
      for (let i = from; i < length && entries.length < page.limit;) {
        const n = Math.floor(i / CHANGES_CHUNK);
        const text = await svc.blobs.get(chunkKey(c.changes_key, kind, n));
        if (!text) break;
        const chunk = JSON.parse(text.toString('utf8')) as ChangeEntry[];
        const at = i - n * CHANGES_CHUNK;
        const take = chunk.slice(at, at + page.limit - entries.length);
        entries.push(...take);
        i += take.length;
        if (!take.length) break;
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
