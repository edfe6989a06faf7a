import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE, renderOpenApi } from '../src/openapi.ts';

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
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/nodes',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/events',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/children',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/retry',
        'POST /api/v1/workflows/{workflow_id}/runs/{run_id}/replay',
        'GET /api/v1/runs',
        'GET /api/v1/runs/{run_id}',
        'GET /api/v1/approvals',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/events/stream',
        'GET /api/v1/workflows/{workflow_id}/runs/{run_id}/nodes/{node_run_id}',
      ].sort(),
    );
  });

  it('names every operation with its own operationId', async () => {
    const document = JSON.parse(await renderOpenApi()) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const ids = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    expect(ids.every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
