/** POST /api/v1/auth/login/ (SPEC.md): email and password for the API key. No API key needed. */
import { login } from '../core/accounts.ts';
import { apiHandler, json } from './middleware.ts';

interface LoginBody {
  email: string;
  password: string;
}

export const handler = apiHandler<LoginBody>({
  auth: false,
  body: {
    type: 'object',
    required: ['email', 'password'],
    properties: { email: { type: 'string', minLength: 1, maxLength: 320 }, password: { type: 'string', minLength: 1, maxLength: 1024 } },
  },
}, async (event, { svc, body }) => json(200, await login(svc, body.email, body.password, event.requestContext.identity.sourceIp)));
