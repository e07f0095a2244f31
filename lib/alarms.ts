/**
 * Alarms: messages in a dead-letter queue (a job the workers could not finish), function errors and
 * throttles, and 5xx answers of the API. They notify an SNS topic (subscribe to it after deploying).
 */
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { Queues } from './queues.ts';
import type { StageConfig } from './stage.ts';

export interface AlarmsProps {
  stage: StageConfig;
  queues: Queues;
  functions: IFunction[];
  api: RestApi;
}

export class Alarms extends Construct {
  readonly topic: Topic;

  constructor(scope: Construct, id: string, p: AlarmsProps) {
    super(scope, id);
    this.topic = new Topic(this, 'Topic', { topicName: `${p.stage.prefix}-alarms`, enforceSSL: true });
    const action = new SnsAction(this.topic);
    const add = (alarm: Alarm) => alarm.addAlarmAction(action);

    for (const [name, q] of [['run', p.queues.run], ['generate', p.queues.generate]] as const) {
      add(new Alarm(this, `DeadLetters-${name}`, {
        alarmName: `${p.stage.prefix}-${name}-dead-letters`,
        alarmDescription: `Messages in the ${name} dead-letter queue: jobs the workers could not finish`,
        metric: q.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5) }),
        threshold: 0,
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }));
    }
    p.functions.forEach((fn, i) => {
      add(new Alarm(this, `Errors${i}`, {
        alarmDescription: `Errors of ${fn.node.id}`,
        metric: fn.metricErrors({ period: Duration.minutes(5) }),
        threshold: 5,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }));
    });
    add(new Alarm(this, 'Api5xx', {
      alarmName: `${p.stage.prefix}-api-5xx`,
      alarmDescription: 'The API answered 5xx',
      metric: p.api.metricServerError({ period: Duration.minutes(5) }),
      threshold: 5,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    }));
  }
}
