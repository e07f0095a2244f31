/**
 * {@link UsageKeys} on API Gateway: one API key per account, member of exactly one usage plan, the one
 * of the account's plan. The authorizer returns the key's value as `usageIdentifierKey`
 * (apiKeySourceType AUTHORIZER), so API Gateway's throttling and quotas apply per account. Callers never
 * see or send this key: they authenticate with their sai_ key.
 */
import {
  APIGatewayClient, ConflictException, CreateApiKeyCommand, CreateUsagePlanKeyCommand, DeleteUsagePlanKeyCommand, GetApiKeyCommand, NotFoundException,
} from '@aws-sdk/client-api-gateway';
import type { UsageKeys } from '../../core/ports.ts';

export interface ApiGatewayUsageKeysOptions {
  /** Usage plan id per plan name (USAGE_PLAN_IDS, written by the stack). */
  usagePlanIds: Record<string, string>;
  /** Prefix of key names, e.g. `scrape-ai-prod`. */
  namePrefix: string;
  client?: APIGatewayClient;
}

export class ApiGatewayUsageKeys implements UsageKeys {
  private readonly client: APIGatewayClient;
  private readonly o: ApiGatewayUsageKeysOptions;

  constructor(o: ApiGatewayUsageKeysOptions) {
    this.client = o.client ?? new APIGatewayClient({});
    this.o = o;
  }

  /** @throws Error for a plan without a usage plan in this stage. */
  async assign(accountId: number, plan: string, currentKeyId: string | null): Promise<{ id: string; value: string }> {
    const target = this.o.usagePlanIds[plan];
    if (!target) throw new Error(`no usage plan for plan "${plan}" in USAGE_PLAN_IDS`);
    let id = currentKeyId;
    let value: string | undefined;
    if (id) {
      value = (await this.client.send(new GetApiKeyCommand({ apiKey: id, includeValue: true }))).value;
    } else {
      const key = await this.client.send(new CreateApiKeyCommand({
        name: `${this.o.namePrefix}-account-${accountId}`, description: `scrape-ai account ${accountId}`, enabled: true,
      }));
      id = key.id!;
      value = key.value;
    }
    // Out of every other plan's usage plan first, so the key is never counted twice.
    for (const [name, usagePlanId] of Object.entries(this.o.usagePlanIds)) {
      if (name === plan) continue;
      try {
        await this.client.send(new DeleteUsagePlanKeyCommand({ usagePlanId, keyId: id }));
      } catch (err) {
        if (!(err instanceof NotFoundException || (err as { name?: string }).name === 'NotFoundException')) throw err;
      }
    }
    try {
      await this.client.send(new CreateUsagePlanKeyCommand({ usagePlanId: target, keyId: id, keyType: 'API_KEY' }));
    } catch (err) {
      if (!(err instanceof ConflictException || (err as { name?: string }).name === 'ConflictException')) throw err;
    }
    if (!value) throw new Error(`API key ${id} has no value`);
    return { id, value };
  }
}
