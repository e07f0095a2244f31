/**
 * Types of ./schema-validator.js, the config schema's validator that `node scripts/generate.ts` writes as
 * standalone code (https://ajv.js.org/standalone.html) from `configSchema` (./schema.ts). Hand-written:
 * the generator does not write types.
 */
import type { ErrorObject } from 'ajv';
import type { ValidatedConfig } from './schema.ts';

/**
 * Ajv's validate function of the config schema (options `CONFIG_AJV_OPTIONS` of scripts/generate.ts).
 * Writes the schema's defaults into `data` (`useDefaults`) as it validates, so `true` means `data` is now
 * a {@link ValidatedConfig}. After a call, `errors` holds every problem (`allErrors`) of that call, in
 * Ajv's {@link ErrorObject} shape (instancePath, schemaPath, keyword, params, message), or null when
 * `data` is valid. Unlike a `ValidateFunction` of `ajv.compile`, it has no `schema` or `schemaEnv`.
 */
export interface ConfigValidateFunction {
  (data: unknown): data is ValidatedConfig;
  errors?: ErrorObject[] | null;
}

/** The validator. The module's default export is the same function (ajv writes both); only this name is typed. */
export declare const validate: ConfigValidateFunction;
