/** PUT /api/v1/configs/{id}/ (beyond docs/spec.md, docs/api.md): validates yaml_content and replaces the config's YAML; 200 with the config. */
import { configView, updateConfig } from '../core/configs.ts';
import { apiHandler, json, uuidParam } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<{ yaml_content: string }>(route('PUT', '/api/v1/configs/{id}/'), async (event, { svc, account, body }) =>
  json(200, configView(await updateConfig(svc, account.id, uuidParam(event, 'Config'), body.yaml_content))));
