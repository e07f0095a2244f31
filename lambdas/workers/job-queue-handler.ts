/**
 * The one shape of a job queue's consumer (SQS with ReportBatchItemFailures; locally the worker threads
 * deliver the same event shape, lambdas/adapters/local/worker-thread.ts): each record's body is
 * `{"job_id": "…"}` and is one delivery for the job type's executor (on the run queue, a schedule's firing message
 * from EventBridge Scheduler, core/schedules.ts, is fired instead); a record that should be delivered
 * again (the executor says `retry`, or it throws) is reported in `batchItemFailures`; an unreadable body is
 * logged and dropped (no delivery could ever read it).
 *
 * Fair scheduling (docs/plans-and-metering.md, "Fair scheduling"): before a job starts, its account must get
 * one of its running-job slots ({@link admitJob}). On AWS the slots live in the store (a lease per running
 * job, given back in a `finally`, so a Lambda that dies frees its slot when the lease ends); a job whose
 * account holds all of its slots is not started: its message is given back with a visibility delay and is
 * received again later. Locally the queue itself never hands out a message of an account at its limit
 * (adapters/local/queue.ts), so the worker threads configure `mode: 'queue'` and no store slot is taken.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { deadLetter } from '../core/jobs.ts';
import { fireScheduleMessage, isScheduleFiring } from '../core/schedules.ts';
import { FINISHED } from '../core/job-states.ts';
import { accountJobLimit } from '../core/plans.ts';
import type { Delivery, DeliveryOutcome, QueueName } from '../core/ports.ts';
import { services, type Services } from '../core/services.ts';
import { logger } from '../logger.ts';

export type { Delivery } from '../core/ports.ts';

/** Where the per-account limit of running jobs is kept. */
export interface JobAdmission {
  /**
   * `store`: each running job holds a slot in the store (AWS); `queue`: the queue hands out no message of an
   * account at its limit (the local queue), and the consumer takes no slot.
   */
  mode: 'store' | 'queue';
  /**
   * Job workers of the deployment (the run worker's maximum concurrency on AWS, SAI_WORKERS locally): an
   * account may hold all but one of them ({@link accountJobLimit}).
   */
  workers: number;
}

/**
 * Deferrals of one message before it is sent again as a fresh message (SQS counts every receive; see below):
 * `MAX_DEFERRALS` (the stage's, lib/stage.ts), 100 by default. The queue's maxReceiveCount allows for them.
 */
export const DEFERRAL_BUDGET = Math.max(1, Number(process.env.MAX_DEFERRALS) || 100);
/** Time a running job's slot is leased beyond the job's time limit, ms (a Lambda that dies frees it then). */
const LEASE_MARGIN_MS = 2 * 60_000;
/** How long a deferral counter is kept, ms (longer than SQS keeps a message: 4 days). */
const DEFERRALS_KEPT_MS = 14 * 86_400_000;

let admission: JobAdmission = {
  mode: 'store',
  workers: Math.max(1, Number(process.env.WORKER_CONCURRENCY) || 2),
};

/** Sets how this process keeps accounts within their limit (local worker threads: `queue`). */
export function configureJobAdmission(a: JobAdmission): void {
  admission = a;
}

/**
 * Seconds before a deferred job is received again: 5 s, doubling to 60 s, with ±20% jitter so the deferred
 * jobs of one account do not come back together.
 * @param deferrals the message's deferrals so far, this one included.
 */
export function deferralDelaySeconds(deferrals: number): number {
  const base = Math.min(60, 5 * 2 ** Math.min(4, Math.max(0, deferrals - 1)));
  return Math.max(1, Math.round(base * (0.8 + Math.random() * 0.4)));
}

/** The counter of a job message's deferrals (Store.consume), per account. */
function deferralCounter(jobId: string): string {
  return `deferrals:${jobId}`;
}

/** What {@link admitJob} decided for one delivery. */
export type Admission =
  /** Run it; give `slot` back when done (null: nothing to give back). */
  | { kind: 'run'; slot: { accountId: number; holder: string } | null; receiveCount: number }
  /** Its account holds every slot: do not start it. */
  | { kind: 'wait'; accountId: number; running: number; limit: number; deferrals: number }
  /** Every delivery that started it died: end it as the dead-letter queue would. */
  | { kind: 'dead'; receiveCount: number };

/**
 * Decides whether one delivery of a job may start now (mode `store`): the job's account takes one of its
 * running-job slots (`max_concurrent_jobs` of its plan, below the workers), leased for the job's time limit
 * plus {@link LEASE_MARGIN_MS}. A redelivery of a running job renews its own slot. SQS counts deferred
 * receives too, so the deliveries that really started the job are the receive count less the message's
 * deferrals; past `maxReceives` of them the job is dead-lettered here (the queue's own redrive allows for
 * {@link DEFERRAL_BUDGET} deferrals more).
 */
export async function admitJob(svc: Services, jobId: string, receiveCount: number): Promise<Admission> {
  const job = await svc.store.getJobById(jobId);
  // Gone or finished: the executor says so and the message is deleted; nothing to hold.
  if (!job || FINISHED.includes(job.status)) return { kind: 'run', slot: null, receiveCount };
  const deferrals = await svc.store.getCounter(job.account_id, deferralCounter(jobId));
  const started = Math.max(1, receiveCount - deferrals);
  if (started > svc.maxReceives) return { kind: 'dead', receiveCount: started - 1 };
  const account = await svc.store.getAccount(job.account_id);
  const limit = accountJobLimit(account ? svc.plans.plans[account.plan] : undefined, admission.workers);
  const now = svc.clock.now();
  const until = new Date(now.getTime() + svc.jobTimeoutMs + LEASE_MARGIN_MS);
  const slot = await svc.store.acquireJobSlot(job.account_id, job.id, limit, until.toISOString(), now.toISOString());
  if (slot.ok) return { kind: 'run', slot: { accountId: job.account_id, holder: job.id }, receiveCount: started };
  return { kind: 'wait', accountId: job.account_id, running: slot.running, limit, deferrals };
}

/**
 * Gives a delivery whose account is at its limit back to the queue for later. SQS allows no receive that
 * does not count (ApproximateReceiveCount grows with every receive, and ChangeMessageVisibility cannot lower
 * it), so the deferrals are counted in the store and subtracted ({@link admitJob}); after
 * {@link DEFERRAL_BUDGET} of them the message is sent again as a fresh one (its receive count starts over) and
 * this one is deleted.
 * @returns true when the record must be reported as a batch item failure (the queue keeps it).
 */
async function defer(svc: Services, queue: QueueName, record: SQSRecord, jobId: string, wait: Extract<Admission, { kind: 'wait' }>): Promise<boolean> {
  const counter = deferralCounter(jobId);
  const expires = new Date(svc.clock.now().getTime() + DEFERRALS_KEPT_MS).toISOString();
  const { used } = await svc.store.consume(wait.accountId, counter, 1, Number.MAX_SAFE_INTEGER, expires);
  const delay = deferralDelaySeconds(used);
  logger.info('job deferred: its account runs as many jobs as its plan allows', { jobId, queue, running: wait.running, limit: wait.limit, deferrals: used, delaySeconds: delay });
  if (used >= DEFERRAL_BUDGET) {
    await svc.queue.send(queue, record.body, { group: String(wait.accountId), delaySeconds: delay });
    await svc.store.refund(wait.accountId, counter, used);
    return false;
  }
  if (svc.queue.deferDelivery) {
    await svc.queue.deferDelivery(queue, record.receiptHandle, delay);
  }
  // Without deferDelivery the message comes back after the queue's visibility timeout.
  return true;
}

/**
 * A queue consumer handler for one job type.
 * @param queue the queue's name, for the log lines.
 * @param deliver runs one delivery of the job with that id.
 */
export function jobQueueHandler(queue: QueueName, deliver: (svc: Services, jobId: string, delivery: Delivery) => Promise<DeliveryOutcome>): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const svc = await services();
    const failures: SQSBatchResponse['batchItemFailures'] = [];
    for (const record of event.Records) {
      let jobId: string;
      let body: unknown;
      try {
        body = JSON.parse(record.body);
        jobId = (body as { job_id: string }).job_id;
      } catch {
        logger.error(`unreadable ${queue} message dropped`, { messageId: record.messageId });
        continue;
      }
      // A schedule's firing (AWS: EventBridge Scheduler puts it on the run queue): it creates and queues the run job.
      if (queue === 'run' && isScheduleFiring(body)) {
        try {
          const outcome = await fireScheduleMessage(svc, body);
          logger.info('schedule firing', { scheduleId: body.schedule_id, outcome });
        } catch (err) {
          logger.error('schedule firing failed; the message is delivered again', { scheduleId: body.schedule_id, error: err });
          failures.push({ itemIdentifier: record.messageId });
        }
        continue;
      }
      let slot: { accountId: number; holder: string } | null = null;
      try {
        let receiveCount = Number(record.attributes.ApproximateReceiveCount) || 1;
        if (admission.mode === 'store') {
          const admitted = await admitJob(svc, jobId, receiveCount);
          if (admitted.kind === 'wait') {
            if (await defer(svc, queue, record, jobId, admitted)) failures.push({ itemIdentifier: record.messageId });
            continue;
          }
          if (admitted.kind === 'dead') {
            await deadLetter(svc, jobId, admitted.receiveCount);
            await releaseSlotOf(svc, jobId);
            continue;
          }
          slot = admitted.slot;
          receiveCount = admitted.receiveCount;
        }
        const outcome = await deliver(svc, jobId, { receiveCount, maxReceives: svc.maxReceives });
        if (outcome === 'retry') failures.push({ itemIdentifier: record.messageId });
      } catch (err) {
        logger.error(`${queue} delivery failed`, { jobId, messageId: record.messageId, error: err });
        failures.push({ itemIdentifier: record.messageId });
      } finally {
        if (slot) await svc.store.releaseJobSlot(slot.accountId, slot.holder).catch((err: unknown) => logger.error('job slot not given back; its lease frees it', { jobId, error: err }));
      }
    }
    return { batchItemFailures: failures };
  };
}

/**
 * Deliveries that really started a job, of a message received `receiveCount` times: SQS counts deferred
 * receives too (AWS), so the message's deferrals are taken off.
 */
export async function startedDeliveries(svc: Services, jobId: string, receiveCount: number): Promise<number> {
  const job = await svc.store.getJobById(jobId);
  if (!job) return receiveCount;
  return Math.max(1, receiveCount - await svc.store.getCounter(job.account_id, deferralCounter(jobId)));
}

/** Gives back the slot a job holds, if any (a job the dead-letter queue ended: its Lambda died holding it). */
export async function releaseSlotOf(svc: Services, jobId: string): Promise<void> {
  const job = await svc.store.getJobById(jobId);
  if (job) await svc.store.releaseJobSlot(job.account_id, job.id);
}
