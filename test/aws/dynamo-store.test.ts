/** The Store contract, unchanged, on the DynamoDB store against the official DynamoDB Local. */
import { DynamoStore } from '../../lambdas/adapters/aws/dynamo-store.ts';
import { runRaceScript, storeContract } from '../contract/store.contract.ts';
import { startDynamoLocal, type DynamoLocal } from '../helpers/dynamodb-local.ts';

let local: DynamoLocal | null = null;
let table = '';

storeContract('DynamoDB (DynamoDB Local)', {
  async makeStore() {
    local = await startDynamoLocal();
    table = await local.createTable();
    return new DynamoStore({ tableName: table, client: local.client(), jobRetentionDays: 30 });
  },
  // Each racer has its own client (its own connections): the requests really overlap at the database.
  race(n, script) {
    return Promise.all(Array.from({ length: n }, () => runRaceScript(new DynamoStore({ tableName: table, client: local!.client() }), script)));
  },
  async cleanup() {
    await local?.stop();
  },
});
