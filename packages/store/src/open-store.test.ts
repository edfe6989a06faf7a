import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openStore } from './open-store.ts';

let dataDir: string;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'switchyard-open-'));
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('openStore', () => {
  it('opens the embedded backend without a MongoDB URI, and says so', async () => {
    const logger = { info: vi.fn(), warn: vi.fn() };
    const store = await openStore({ mongodbUri: '', dataDir, logger });
    expect(store.backend).toBe('embedded');
    expect(logger.info).toHaveBeenCalledWith({ backend: 'embedded', dataDir }, expect.stringContaining('STORE BACKEND: embedded'));
    await store.close();
  });

  it("routes the embedded store's warnings to the logger", async () => {
    writeFileSync(join(dataDir, 'journal.jsonl'), '{"torn');
    const logger = { info: vi.fn(), warn: vi.fn() };
    const store = await openStore({ mongodbUri: '', dataDir, logger });
    expect(logger.warn).toHaveBeenCalledWith({ backend: 'embedded', dataDir }, expect.stringMatching(/journal\.jsonl/));
    await store.close();
  });
});
