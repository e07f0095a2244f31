/** GET /api/v1/me/ (docs/spec.md): the caller's account and subscription. */
import { accountView } from '../core/accounts.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

export const handler = apiHandler(route('GET', '/api/v1/me/'), async (_event, { svc, account }) => json(200, await accountView(svc, account)));
