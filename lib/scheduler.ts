/**
 * Scheduled runs on AWS (issue 26): the stage's EventBridge Scheduler schedule group, and the role EventBridge
 * Scheduler assumes to put a firing message on the run queue (SendMessage on that queue only). The functions that
 * create, re-arm and delete schedules (routes with `access.scheduler`, and the run worker, which re-arms a schedule for
 * its next slot after a firing) get {@link Scheduling.grantManage}: the schedule actions on this group's schedules and
 * iam:PassRole of that one role to the scheduler service. Each stored schedule's EventBridge schedule is deleted with
 * it (lambdas/adapters/aws/schedule-triggers.ts); the group holds nothing else.
 */
import { Stack } from 'aws-cdk-lib';
import { Effect, PolicyStatement, Role, ServicePrincipal, type IGrantable } from 'aws-cdk-lib/aws-iam';
import { CfnScheduleGroup } from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import type { Queues } from './queues.ts';
import type { StageConfig } from './stage.ts';

export class Scheduling extends Construct {
  readonly groupName: string;
  readonly role: Role;
  /** ARN pattern of the group's schedules. */
  readonly schedulesArn: string;

  constructor(scope: Construct, id: string, p: { stage: StageConfig; queues: Queues }) {
    super(scope, id);
    this.groupName = `${p.stage.prefix}-schedules`;
    const group = new CfnScheduleGroup(this, 'Group', { name: this.groupName });
    const stack = Stack.of(this);
    this.schedulesArn = stack.formatArn({ service: 'scheduler', resource: 'schedule', resourceName: `${this.groupName}/*` });
    this.role = new Role(this, 'SchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      description: 'EventBridge Scheduler puts firing messages of scrape-ai schedules on the run queue',
    });
    p.queues.run.queue.grantSendMessages(this.role);
    this.node.addDependency(group);
  }

  /** Lets `fn` create, update and delete the group's schedules and pass the scheduler role to EventBridge Scheduler. */
  grantManage(fn: IGrantable): void {
    fn.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule'],
      resources: [this.schedulesArn],
    }));
    fn.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({
      effect: Effect.ALLOW,
      actions: ['iam:PassRole'],
      resources: [this.role.roleArn],
      conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
    }));
  }
}
