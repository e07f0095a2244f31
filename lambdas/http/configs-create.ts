/** POST /api/v1/configs/ (SPEC.md): validates yaml_content and stores the config; 201 with the config. */
import { configView, createConfig, type NewConfig } from '../core/configs.ts';
import { apiHandler, json } from './middleware.ts';

export const handler = apiHandler<NewConfig>({
  body: {
    type: 'object',
    required: ['name', 'target_url', 'yaml_content'],
    additionalProperties: false,
    properties: {
      name: { type: 'string', minLength: 1, maxLength: 200 },
      target_url: { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://\\S+$' },
      yaml_content: { type: 'string', minLength: 1 },
      prompt: { type: ['string', 'null'], maxLength: 10000 },
    },
  },
}, async (_event, { svc, account, body }) => json(201, configView(await createConfig(svc, account.id, body))));
