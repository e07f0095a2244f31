/** POST /api/v1/auth/login/ (docs/spec.md): email and password for the API key. No API key needed. */
import { login } from '../core/accounts.ts';
import { apiHandler, json } from './middleware.ts';
import { route } from '../routes.ts';

interface LoginBody {
  email: string;
  password: string;
}

export const handler = apiHandler<LoginBody>(route('POST', '/api/v1/auth/login/'), async (event, { svc, body }) => json(200, await login(svc, body.email, body.password, event.requestContext.identity.sourceIp)));
