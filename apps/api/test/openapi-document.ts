/**
 * Test support: the generated OpenAPI document and its Schema Objects compiled as JSON Schema
 * 2020-12 (the dialect of OpenAPI 3.1), strictly: a keyword 2020-12 does not know, such as
 * OpenAPI 3.0's `nullable`, is an error, where the OpenAPI validator only checks the document's
 * structure and lets any keyword through in a schema.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { renderOpenApi } from '../src/openapi.ts';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** The parts of the document the tests read. */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

export interface Operation {
  operationId: string;
  parameters?: Array<{ in: string; name: string }>;
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { description: string; headers?: Record<string, unknown>; content?: Record<string, { schema: unknown }> }>;
}

/** The document as `npm run openapi` writes it. */
export async function openApiDocument(): Promise<OpenApiDocument> {
  return JSON.parse(await renderOpenApi()) as OpenApiDocument;
}

/** Every operation with its method and path. */
export function operations(document: OpenApiDocument): Array<{ method: string; path: string; operation: Operation }> {
  return Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ method, path, operation })));
}

/** A JSON pointer to `parts` (escaped as RFC 6901 says). */
function pointer(parts: ReadonlyArray<string | number>): string {
  return parts.map((part) => String(part).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

/** JSON pointers (within the document) of every Schema Object of components, parameters, bodies and responses. */
export function schemaLocations(document: OpenApiDocument): string[] {
  const locations: Array<ReadonlyArray<string | number>> = Object.keys(document.components.schemas).map((name) => ['components', 'schemas', name]);
  for (const { method, path, operation } of operations(document)) {
    const at = ['paths', path, method];
    (operation.parameters ?? []).forEach((_parameter, i) => locations.push([...at, 'parameters', i, 'schema']));
    for (const type of Object.keys(operation.requestBody?.content ?? {})) locations.push([...at, 'requestBody', 'content', type, 'schema']);
    for (const [status, response] of Object.entries(operation.responses)) {
      for (const type of Object.keys(response.content ?? {})) locations.push([...at, 'responses', status, 'content', type, 'schema']);
      for (const name of Object.keys(response.headers ?? {})) locations.push([...at, 'responses', status, 'headers', name, 'schema']);
    }
  }
  return locations.map(pointer);
}

/** Base URI under which the document is known to Ajv, so `#/components/schemas/X` references resolve. */
const DOCUMENT_URI = 'https://switchyard.invalid/openapi.json';

/**
 * Compiles the Schema Object at `location` (a pointer from {@link schemaLocations}) in strict
 * JSON Schema 2020-12; throws on a keyword 2020-12 does not define or a malformed schema.
 */
export function schemaCompiler(document: OpenApiDocument): (location: string) => ValidateFunction {
  const ajv = addFormats(new Ajv2020({ strictSchema: true, strictTypes: false, strictTuples: false, strictRequired: false, allErrors: true }));
  // Ajv knows `nullable` (an OpenAPI 3.0 keyword) by default; JSON Schema 2020-12 does not.
  ajv.removeKeyword('nullable');
  // OpenAPI 3.1's own schema keywords, and the document's fields around the schemas.
  ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs', 'openapi', 'info', 'tags', 'paths', 'components']);
  ajv.addSchema({ ...document, $id: DOCUMENT_URI });
  return (location) => ajv.compile({ $ref: `${DOCUMENT_URI}#/${location}` });
}
