/**
 * {@link ScheduleTriggers} on Amazon EventBridge Scheduler (issue 26): one EventBridge schedule per stored schedule,
 * named after it, in the stage's schedule group, deleted with it. Its target is the run queue (SQS SendMessage by
 * the scheduler's role) with a firing message ({@link ScheduleFiringMessage}); the run worker fires it
 * (core/schedules.ts `fireSchedule`).
 *
 * Each EventBridge schedule is a one-time `at(…)` schedule for the stored schedule's next slot, re-armed for the
 * following slot after every firing (`fireSchedule` calls {@link EventBridgeScheduleTriggers.put} with the claimed
 * record). Why not an EventBridge `cron(…)` expression: its 6-field dialect differs from the 5-field cron the API
 * takes (no OR of day-of-month and day-of-week, `?` required, day-of-week 1-7 from Sunday, its own DST rules), so a
 * translation would fire at other times than the `next_run_at` the API shows; an `at()` of the slot croner computed
 * fires exactly then. A disabled or paused schedule, or one that never fires again, has a DISABLED trigger.
 * API: https://docs.aws.amazon.com/scheduler/latest/APIReference/API_CreateSchedule.html
 */
import {
  ConflictException, CreateScheduleCommand, DeleteScheduleCommand, ResourceNotFoundException, SchedulerClient, UpdateScheduleCommand,
  type CreateScheduleCommandInput,
} from '@aws-sdk/client-scheduler';
import type { ScheduleRecord, ScheduleTriggers } from '../../core/ports.ts';
import type { ScheduleFiringMessage } from '../../core/schedules.ts';

export interface EventBridgeTriggerOptions {
  /** The stage's schedule group (SCHEDULE_GROUP). */
  groupName: string;
  /** ARN of the run queue (RUN_QUEUE_ARN). */
  runQueueArn: string;
  /** ARN of the role EventBridge Scheduler assumes to send to the run queue (SCHEDULER_ROLE_ARN). */
  roleArn: string;
  client?: SchedulerClient;
}

/** A stored schedule's EventBridge schedule name (at most 64 characters: `sai-` and a UUID). */
export function triggerName(scheduleId: string): string {
  return `sai-${scheduleId}`;
}

/** An `at()` expression of an instant, UTC, to the second (EventBridge Scheduler's `yyyy-mm-ddThh:mm:ss`). */
export function atExpression(iso: string): string {
  return `at(${new Date(iso).toISOString().slice(0, 19)})`;
}

export class EventBridgeScheduleTriggers implements ScheduleTriggers {
  private readonly client: SchedulerClient;
  private readonly o: EventBridgeTriggerOptions;

  constructor(o: EventBridgeTriggerOptions) {
    this.o = o;
    this.client = o.client ?? new SchedulerClient({});
  }

  /** The CreateSchedule/UpdateSchedule input of a schedule (exported for the adapter tests). */
  input(s: ScheduleRecord): CreateScheduleCommandInput {
    const message: ScheduleFiringMessage = { schedule_id: s.id, account_id: s.account_id, scheduled_time: '<aws.scheduler.scheduled-time>' };
    const active = s.enabled && s.next_run_at !== null;
    return {
      Name: triggerName(s.id),
      GroupName: this.o.groupName,
      // A trigger that will not fire still needs a valid expression: a year from now (never in the past).
      ScheduleExpression: atExpression(active ? s.next_run_at! : new Date(Date.now() + 365 * 86_400_000).toISOString()),
      ScheduleExpressionTimezone: 'UTC',
      State: active ? 'ENABLED' : 'DISABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'NONE',
      Description: `scrape-ai schedule ${s.id} (account ${s.account_id}, config ${s.config_id}): ${s.cron} ${s.timezone}`.slice(0, 512),
      Target: {
        Arn: this.o.runQueueArn,
        RoleArn: this.o.roleArn,
        Input: JSON.stringify(message),
        RetryPolicy: { MaximumRetryAttempts: 10, MaximumEventAgeInSeconds: 3600 },
      },
    };
  }

  async put(s: ScheduleRecord, options: { onlyIfExists?: boolean } = {}): Promise<void> {
    const input = this.input(s);
    try {
      await this.client.send(new UpdateScheduleCommand(input));
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
      if (options.onlyIfExists) return;
      try {
        await this.client.send(new CreateScheduleCommand(input));
      } catch (e) {
        // Created meanwhile by a concurrent put: update it to this version.
        if (!(e instanceof ConflictException)) throw e;
        await this.client.send(new UpdateScheduleCommand(input));
      }
    }
  }

  async remove(scheduleId: string): Promise<void> {
    try {
      await this.client.send(new DeleteScheduleCommand({ Name: triggerName(scheduleId), GroupName: this.o.groupName }));
    } catch (err) {
      if (!(err instanceof ResourceNotFoundException)) throw err;
    }
  }
}
