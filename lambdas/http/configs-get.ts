/** GET /api/v1/configs/{id}/ (docs/spec.md): one config with its yaml_content; 404 when absent or another account's. */
import { configView, getConfig } from '../core/configs.ts';
import { apiHandler, json, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/configs/{id}/'), async (event, { svc, account }) =>
  json(200, configView(await getConfig(svc, account.id, uuidParam(event, 'Config')))));
