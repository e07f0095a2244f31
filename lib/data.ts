/**
 * The stateful resources: the single DynamoDB table (on-demand, point-in-time recovery, TTL), the S3
 * bucket for results and screenshots (encrypted, public access blocked, TLS only, lifecycle rules) and
 * the Secrets Manager secret that seals API keys. Table layout: docs/dynamodb.md.
 */
import { Duration } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { GSI1, GSI2, KEYS } from '../lambdas/adapters/aws/table.ts';
import { physicalNames, type StageConfig } from './stage.ts';

export class Data extends Construct {
  readonly table: Table;
  readonly bucket: Bucket;
  readonly sealingSecret: Secret;

  constructor(scope: Construct, id: string, stage: StageConfig) {
    super(scope, id);
    const names = physicalNames(stage.name);
    this.table = new Table(this, 'Table', {
      tableName: names.table,
      partitionKey: { name: KEYS.pk, type: AttributeType.STRING },
      sortKey: { name: KEYS.sk, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: KEYS.ttl,
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: stage.removalPolicy,
      deletionProtection: stage.name === 'prod',
    });
    for (const [indexName, pk, sk] of [[GSI1, KEYS.gsi1pk, KEYS.gsi1sk], [GSI2, KEYS.gsi2pk, KEYS.gsi2sk]] as const) {
      this.table.addGlobalSecondaryIndex({
        indexName,
        partitionKey: { name: pk, type: AttributeType.STRING },
        sortKey: { name: sk, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }

    this.bucket = new Bucket(this, 'Results', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      versioned: false,
      removalPolicy: stage.removalPolicy,
      autoDeleteObjects: stage.name !== 'prod',
      lifecycleRules: [
        { id: 'results', prefix: 'results/', expiration: Duration.days(stage.resultRetentionDays) },
        // Screenshot URLs work for an hour (lambdas/tools/screenshot.ts); a day is S3's shortest expiration.
        { id: 'screenshots', prefix: 'screenshots/', expiration: Duration.days(1) },
        { id: 'incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
    });

    this.sealingSecret = new Secret(this, 'SealingSecret', {
      secretName: names.secret,
      description: 'Seals API keys at rest (AES-256-GCM key derived with HKDF); changing it forces new keys at the next login',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      removalPolicy: stage.removalPolicy,
    });
  }
}
