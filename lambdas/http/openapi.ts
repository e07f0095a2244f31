/**
 * GET /api/v1/openapi.json: this API as an OpenAPI 3.1 document, no API key needed. The document is
 * docs/openapi.json, generated from the route table by `node scripts/generate.ts` and imported here so that the
 * handler's bundle carries it.
 */
import doc from '../../docs/openapi.json' with { type: 'json' };
import { route } from '../routes.ts';
import { apiHandler, jsonText } from './middleware.ts';

const text = JSON.stringify(doc);

export const handler = apiHandler(route('GET', '/api/v1/openapi.json'), async () => ({
  ...jsonText(200, text),
  headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'public, max-age=300', 'Access-Control-Allow-Origin': '*' },
}));
