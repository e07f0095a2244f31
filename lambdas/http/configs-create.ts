/** POST /api/v1/configs/ (docs/spec.md): validates yaml_content and stores the config; 201 with the config. */
import { configView, createConfig, type NewConfig } from '../core/configs.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<NewConfig>(route('POST', '/api/v1/configs/'), async (_event, { svc, account, body }) => json(201, configView(await createConfig(svc, account.id, body))));
