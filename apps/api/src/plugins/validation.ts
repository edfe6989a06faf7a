/**
 * Request validation without surprises (STYLE.md §2 "Avoid"): request bodies are validated as
 * sent — no type coercion, so an explicit `null` stays null and `"true"` is not a boolean — while
 * path and query parameters, which arrive as text, are coerced to the declared types
 * (`?page=2` -> 2). Defaults declared in schemas are applied; unknown body properties are kept.
 */
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const shared: Options = { useDefaults: true, removeAdditional: false, allErrors: false, strict: false };

/** Installs the two validators on `app` (call before registering routes). */
export function installValidators(app: FastifyInstance): void {
  const bodies = addFormats(new Ajv({ ...shared, coerceTypes: false }));
  const parameters = addFormats(new Ajv({ ...shared, coerceTypes: 'array' }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodies : parameters).compile(schema));
}
