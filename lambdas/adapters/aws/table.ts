/**
 * The single DynamoDB table of the service: its keys and indexes, shared by the CDK stack (lib/data.ts),
 * the store (dynamo-store.ts) and the tests that create it on DynamoDB Local. Layout: docs/dynamodb.md.
 */

/** Attribute names of the table's keys. */
export const KEYS = {
  pk: 'PK',
  sk: 'SK',
  gsi1pk: 'GSI1PK',
  gsi1sk: 'GSI1SK',
  gsi2pk: 'GSI2PK',
  gsi2sk: 'GSI2SK',
  /** TTL attribute: epoch seconds after which DynamoDB deletes the item. */
  ttl: 'ttl',
} as const;

/** GSI1: an account's jobs newest first (`ACCOUNT#<id>#JOBS`), and the list of accounts (`ACCOUNTS`). */
export const GSI1 = 'GSI1';
/** GSI2: unfinished jobs by status (`STATUS#<status>`), sparse: a finished job leaves it. */
export const GSI2 = 'GSI2';

/** The CreateTable input (on-demand), as DynamoDB Local and CloudFormation both understand it. */
export function tableDefinition(tableName: string) {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST' as const,
    AttributeDefinitions: [KEYS.pk, KEYS.sk, KEYS.gsi1pk, KEYS.gsi1sk, KEYS.gsi2pk, KEYS.gsi2sk].map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
    KeySchema: [{ AttributeName: KEYS.pk, KeyType: 'HASH' as const }, { AttributeName: KEYS.sk, KeyType: 'RANGE' as const }],
    GlobalSecondaryIndexes: [
      { IndexName: GSI1, KeySchema: [{ AttributeName: KEYS.gsi1pk, KeyType: 'HASH' as const }, { AttributeName: KEYS.gsi1sk, KeyType: 'RANGE' as const }], Projection: { ProjectionType: 'ALL' as const } },
      { IndexName: GSI2, KeySchema: [{ AttributeName: KEYS.gsi2pk, KeyType: 'HASH' as const }, { AttributeName: KEYS.gsi2sk, KeyType: 'RANGE' as const }], Projection: { ProjectionType: 'ALL' as const } },
    ],
  };
}
