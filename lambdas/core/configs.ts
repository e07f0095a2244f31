/**
 * Saved configs per account (docs/spec.md, "Config"; endpoints /api/v1/configs/).
 */
import { randomUUID } from 'node:crypto';
import { CodedError } from '../errors.ts';
import { parseConfig, type ScrapeConfig } from '../engine/config.ts';
import type { ConfigRecord } from './ports.ts';
import type { Services } from './services.ts';

/**
 * Parses and validates config text with the services' config parser, or inline when they have none.
 * @throws CodedError `invalid_config` (engine/config.ts `parseConfig`).
 */
export function parseConfigText(svc: Services, yamlText: string): Promise<ScrapeConfig> {
  return svc.configParser ? svc.configParser.parse(yamlText) : Promise.resolve().then(() => parseConfig(yamlText));
}

export interface NewConfig {
  name: string;
  target_url: string;
  yaml_content: string;
  prompt?: string | null;
}

/** The config as returned by the single read and by create (with yaml_content). */
export function configView(c: ConfigRecord): Record<string, unknown> {
  return { id: c.id, name: c.name, target_url: c.target_url, yaml_content: c.yaml_content, prompt: c.prompt, created_at: c.created_at };
}

/** A list item: docs/spec.md's `{id, name, target_url, created_at}`. */
export function configListItem(c: ConfigRecord): Record<string, unknown> {
  return { id: c.id, name: c.name, target_url: c.target_url, created_at: c.created_at };
}

/**
 * Validates and stores a config.
 * @throws CodedError `invalid_request` for a blank name; ConfigError `invalid_config` when yaml_content is
 *   not a valid config. Nothing is stored when it throws.
 */
export async function createConfig(svc: Services, accountId: number, input: NewConfig): Promise<ConfigRecord> {
  if (!input.name.trim()) throw new CodedError('invalid_request', 'name must not be blank', [{ path: 'name', message: 'is blank' }]);
  await parseConfigText(svc, input.yaml_content);
  const record: ConfigRecord = {
    id: randomUUID(),
    account_id: accountId,
    name: input.name.trim(),
    target_url: input.target_url.trim(),
    yaml_content: input.yaml_content,
    prompt: input.prompt ?? null,
    created_at: svc.clock.now().toISOString(),
  };
  await svc.store.createConfig(record);
  return record;
}

/** @throws CodedError `not_found` (404) when absent or another account's. */
export async function getConfig(svc: Services, accountId: number, id: string): Promise<ConfigRecord> {
  const c = await svc.store.getConfig(accountId, id);
  if (!c) throw new CodedError('not_found', `Config ${id} not found`);
  return c;
}

/**
 * Replaces a config's YAML after validating it (`PUT /api/v1/configs/{id}/`, docs/api.md: not in docs/spec.md; the
 * dashboard's and the extension's "save"). Name, target URL, prompt and creation time stay.
 * @throws ConfigError `invalid_config` (nothing changed); CodedError `not_found` (404) when absent or another account's.
 */
export async function updateConfig(svc: Services, accountId: number, id: string, yamlContent: string): Promise<ConfigRecord> {
  await parseConfigText(svc, yamlContent);
  const updated = await svc.store.updateConfigYaml(accountId, id, yamlContent);
  if (!updated) throw new CodedError('not_found', `Config ${id} not found`);
  return updated;
}

/**
 * Validates config text without storing it (`POST /api/v1/configs/validate/`, docs/api.md): the names of the
 * fields it extracts, in order, when it is valid.
 * @throws ConfigError `invalid_config` with details `[{path, line, column, message}]`.
 */
export async function validateConfigText(svc: Services, yamlContent: string): Promise<{ valid: true; fields: string[] }> {
  const config = await parseConfigText(svc, yamlContent);
  return { valid: true, fields: config.extract.fields.map((f) => f.name) };
}

/** @throws CodedError `not_found` (404) when absent or another account's. */
export async function deleteConfig(svc: Services, accountId: number, id: string): Promise<void> {
  if (!(await svc.store.deleteConfig(accountId, id))) throw new CodedError('not_found', `Config ${id} not found`);
}
