import { readFile } from 'node:fs/promises';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE, renderOpenApi } from '../src/openapi.ts';
import { openApiDocument, operations, schemaCompiler, schemaLocations } from './openapi-document.ts';

/** The operations counted by a per-client rate limit (plugins/rate-limits.ts). */
const RATE_LIMITED = ['triggerRun', 'retryRun', 'replayRun', 'rerunNode', 'approveRequirement', 'pauseRun', 'resumeRun', 'cancelRun', 'createHumanRequest', 'postEvent', 'createWorkflow', 'updateWorkflow', 'validateWorkflow', 'replaceWorkflowAccess', 'createSchedule', 'updateSchedule', 'triggerSchedule', 'backfillSchedule'];

describe('openapi/openapi.json', () => {
  it('matches the routes (regenerate with `npm run openapi`)', async () => {
    const committed = await readFile(OPENAPI_FILE, 'utf8');
    expect(committed).toBe(await renderOpenApi());
  });

  it('documents every endpoint of the REST contract', async () => {
    const document = JSON.parse(await renderOpenApi()) as { paths: Record<string, Record<string, unknown>> };
    const operations = Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(operations.sort()).toEqual(
      [
        'GET /api/v1/workflows',
        'POST /api/v1/workflows',
        'POST /api/v1/workflows/validate',
        'GET /api/v1/workflows/{workflow_id}',
        'PUT /api/v1/workflows/{workflow_id}',
        'DELETE /api/v1/workflows/{workflow_id}',
        'POST /api/v1/workflows/{workflow_id}/toggle',
        'POST /api/v1/workflows/{workflow_id}/runs',
        'GET /api/v1/workflows/{workflow_id}/runs',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}',
        'DELETE /api/v1/workflows/{workflow_id}/runs/{run_id}',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/approve',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/human-requests',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/human-requests/{request_id}',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/nodes',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/events',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/children',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/retry',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/replay',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/pause',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/resume',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/cancel',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/nodes/{node_id}/rerun',
        'GET /api/v1/runs',
        'GET /api/v1/runs/{run_id}',
        'GET /api/v1/approvals',
        'GET /api/v1/executors',
        'GET /api/v1/workflows/{workflow_id}/audit',
        'GET /api/v1/workflows/{workflow_id}/access',
        'PUT /api/v1/workflows/{workflow_id}/access',
        'GET /api/v1/audit',
        'POST /api/v1/events',
        'GET /api/v1/events',
        'GET /api/v1/events/{event_id}',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/events/stream',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/nodes/{node_run_id}',
        'GET /livez',
        'GET /healthz',
        'GET /readyz',
        'GET /api/v1/schedules',
        'GET /api/v1/workflows/{workflow_id}/schedules',
        'POST /api/v1/workflows/{workflow_id}/schedules',
        'GET /api/v1/workflows/{workflow_id}/schedules/{schedule_id}',
        'PUT /api/v1/workflows/{workflow_id}/schedules/{schedule_id}',
        'DELETE /api/v1/workflows/{workflow_id}/schedules/{schedule_id}',
        'POST /api/v1/workflows/{workflow_id}/schedules/{schedule_id}/trigger',
        'POST /api/v1/workflows/{workflow_id}/schedules/{schedule_id}/pause',
        'POST /api/v1/workflows/{workflow_id}/schedules/{schedule_id}/resume',
        'POST /api/v1/workflows/{workflow_id}/schedules/{schedule_id}/backfill',
      ].sort(),
    );
  });

  it('names every operation with its own operationId', async () => {
    const document = JSON.parse(await renderOpenApi()) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const ids = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const document = await openApiDocument();
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(document as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has schemas that are strict JSON Schema 2020-12 (no OpenAPI 3.0 keywords such as nullable)', async () => {
    const document = await openApiDocument();
    const compile = schemaCompiler(document);
    const locations = schemaLocations(document);
    expect(locations.length).toBeGreaterThan(100);
    const failures = locations.flatMap((location) => {
      try {
        compile(location);
        return [];
      } catch (error) {
        return [`${location}: ${(error as Error).message}`];
      }
    });
    expect(failures).toEqual([]);
  });

  it('declares on every operation the error statuses it can answer, each with the shared ErrorBody', async () => {
    const document = await openApiDocument();
    for (const { method, path, operation } of operations(document)) {
      const statuses = Object.keys(operation.responses);
      const expected = ['400', '500', '503'];
      if (method !== 'get') expected.push('413', '415');
      if (path.includes('{')) expected.push('404');
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(expected));
      if (RATE_LIMITED.includes(operation.operationId)) expect(statuses, `${method} ${path} is rate-limited`).toContain('429');
      else expect(statuses, `${method} ${path} is not rate-limited`).not.toContain('429');
      for (const status of statuses.filter((s) => Number(s) >= 400)) {
        const response = operation.responses[status];
        // The readiness probe's 503 is its report naming the failing check, not an error body.
        if (operation.operationId === 'getReadiness' && status === '503') continue;
        expect(response.content?.['application/json']?.schema, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorBody' });
        expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
      }
    }
    expect(operations(document).find(({ operation }) => operation.operationId === 'streamRunEvents')?.operation.responses).toHaveProperty('406');
  });

  it('documents the public probes under the health tag, /readyz answering its report on 200 and 503', async () => {
    const document = await openApiDocument();
    const probes = operations(document).filter(({ operation }) => (operation as { tags?: string[] }).tags?.includes('health'));
    expect(probes.map(({ path }) => path).sort()).toEqual(['/healthz', '/livez', '/readyz']);
    for (const { operation } of probes) expect((operation as { security?: unknown[] }).security ?? [], operation.operationId).toEqual([]);
    const readiness = probes.find(({ path }) => path === '/readyz')!.operation.responses as Record<string, any>;
    for (const status of ['200', '503']) {
      const schema = readiness[status].content['application/json'].schema;
      expect(Object.keys(schema.properties).sort(), status).toEqual(['checkedAt', 'checks', 'status']);
      expect(Object.keys(schema.properties.checks.properties).sort(), status).toEqual(['recovery', 'retention', 'schedules', 'store', 'timeoutSweeper']);
    }
  });
});
