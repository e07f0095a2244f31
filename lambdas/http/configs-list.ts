/** GET /api/v1/configs/ (docs/spec.md): `{count, results: [{id, name, target_url, created_at}]}`, newest first. */
import { configListItem } from '../core/configs.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/configs/'), async (_event, { svc, account }) => {
  const configs = await svc.store.listConfigs(account.id);
  return json(200, { count: configs.length, results: configs.map(configListItem) });
});
