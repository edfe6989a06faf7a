/**
 * Error answers as the OpenAPI document declares them: each body is checked against the schema
 * its operation's response declares for that status (app.inject, with stand-in repositories).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '@switchyard/store';
import { buildApp } from '../src/app.ts';
import type { AppServices } from '../src/services/index.ts';
import { openApiDocument, schemaCompiler, type OpenApiDocument } from './openapi-document.ts';

const UNKNOWN_ID = '0123456789abcdef01234567';
const FAILING_ID = 'ffffffffffffffffffffffff';

/** Repositories that know nothing, and whose store refuses to read {@link FAILING_ID}. */
const services = {
  repos: {
    definitions: {
      get: async (id: string) => {
        if (id === FAILING_ID) throw new StoreUnavailableError('disk full on /data', { retryAfterMs: 2_500 });
        return null;
      },
    },
    runs: { get: async () => null, getInWorkflow: async () => null },
  },
} as unknown as AppServices;

let app: FastifyInstance;
let document: OpenApiDocument;
let compile: ReturnType<typeof schemaCompiler>;
beforeAll(async () => {
  app = await buildApp({ services, docs: false });
  document = await openApiDocument();
  compile = schemaCompiler(document);
});
afterAll(async () => {
  await app.close();
});

/** Asserts that `body` is what the document declares for `status` of `method` `path` (an OpenAPI path). */
function expectDeclared(method: string, path: string, status: number, body: unknown): void {
  const response = document.paths[path]?.[method]?.responses[String(status)];
  expect(response, `${method} ${path} declares ${status}`).toBeDefined();
  const validate = compile(`paths/${path.replace(/~/g, '~0').replace(/\//g, '~1')}/${method}/responses/${status}/content/application~1json/schema`);
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
}

describe('error responses', () => {
  it('a body that is not JSON is the declared 415 unsupported_media_type', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/v1/workflows', headers: { 'content-type': 'application/xml' }, payload: '<workflow/>' });
    expect(response.statusCode).toBe(415);
    const body = response.json();
    expect(body).toEqual({
      detail: { error: 'unsupported_media_type', message: 'Unsupported Content-Type: request bodies must be one of application/json, application/yaml, application/x-yaml, text/yaml' },
    });
    expectDeclared('post', '/api/v1/workflows', 415, body);
  });

  it('an unknown workflow is the declared 404 with detail.resource "workflow"', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/v1/workflows/${UNKNOWN_ID}` });
    expect(response.statusCode).toBe(404);
    const body = response.json();
    expect(body).toEqual({ detail: { error: 'resource_not_found', message: 'Workflow not found', resource: 'workflow' } });
    expectDeclared('get', '/api/v1/workflows/{workflow_id}', 404, body);
  });

  it('an unknown run is the declared 404 with detail.resource "run"', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/v1/runs/${UNKNOWN_ID}` });
    expect(response.statusCode).toBe(404);
    const body = response.json();
    expect(body).toEqual({ detail: { error: 'resource_not_found', message: 'Run not found', resource: 'run' } });
    expectDeclared('get', '/api/v1/runs/{run_id}', 404, body);
  });

  it('a store that refuses work is the declared 503 store_unavailable with Retry-After', async () => {
    const response = await app.inject({ method: 'GET', url: `/api/v1/workflows/${FAILING_ID}` });
    expect(response.statusCode).toBe(503);
    expect(response.headers['retry-after']).toBe('3');
    const body = response.json();
    expect(body).toEqual({ detail: { error: 'store_unavailable', message: 'disk full on /data' } });
    expectDeclared('get', '/api/v1/workflows/{workflow_id}', 503, body);
    expect(document.paths['/api/v1/workflows/{workflow_id}']?.get?.responses['503']?.headers).toHaveProperty('retry-after');
  });

  it('a malformed id is the declared 400 invalid_request', async () => {
    const response = await app.inject({ method: 'DELETE', url: '/api/v1/workflows/nope' });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body.detail).toMatchObject({ error: 'invalid_request', message: "Invalid workflow ID: 'nope' is not a 24-character hex id" });
    expectDeclared('delete', '/api/v1/workflows/{workflow_id}', 400, body);
  });
});
