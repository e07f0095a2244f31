/** POST /api/v1/configs/validate/ (beyond docs/spec.md, docs/api.md): checks yaml_content as create would, storing nothing. */
import { validateConfigText } from '../core/configs.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler<{ yaml_content: string }>(route('POST', '/api/v1/configs/validate/'), async (_event, { svc, body }) =>
  json(200, await validateConfigText(svc, body.yaml_content)));
