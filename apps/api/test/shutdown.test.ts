/**
 * The shutdown procedure of the server (shutdown.ts) and the close of the services: the engine
 * stops claiming before anything else, a failing or hanging step never keeps the others from
 * running (the engine still releases its leases), and the process always exits — 0 when clean, 1
 * on a failure or, by the timer, when something hangs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openEmbeddedStore } from '@switchyard/store';
import { loadConfig } from '../src/config.ts';
import { openServices } from '../src/services/index.ts';
import { SHUTDOWN_MARGIN_MS, TRACING_FLUSH_MS, gracefulShutdown, type ShutdownDeps } from '../src/shutdown.ts';

const logger = pino({ level: 'silent' });

/** Shutdown deps whose steps record their calls in `calls`; `overrides` replace a step. */
function fakeDeps(calls: string[], overrides: { appClose?: () => Promise<void>; servicesClose?: () => Promise<void> } = {}) {
  const exit = vi.fn<(code: number) => void>();
  const deps: ShutdownDeps = {
    app: { close: overrides.appClose ?? (async () => void calls.push('app.close')) } as ShutdownDeps['app'],
    services: {
      engine: {
        stopClaiming: () => void calls.push('engine.stopClaiming'),
        close: async ({ graceMs }: { graceMs?: number } = {}) => void calls.push(`engine.close(${graceMs})`),
      } as unknown as ShutdownDeps['services']['engine'],
      close: overrides.servicesClose ?? (async () => void calls.push('services.close')),
    },
    logger,
    graceMs: 3_000,
    exit,
  };
  return { deps, exit };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('gracefulShutdown', () => {
  it('stops claiming first, closes the app and drains the engine with the grace, closes the services, exits 0; once', async () => {
    const calls: string[] = [];
    const { deps, exit } = fakeDeps(calls);
    const shutdown = gracefulShutdown(deps);
    await Promise.all([shutdown('SIGTERM'), shutdown('SIGINT')]);
    expect(calls).toEqual(['engine.stopClaiming', 'app.close', 'engine.close(3000)', 'services.close']);
    expect(exit.mock.calls).toEqual([[0]]);
  });

  it('still drains the engine and closes the services when the app fails to close, and exits 1', async () => {
    const calls: string[] = [];
    const { deps, exit } = fakeDeps(calls, { appClose: async () => Promise.reject(new Error('listener stuck')) });
    await gracefulShutdown(deps)('SIGTERM');
    expect(calls).toEqual(['engine.stopClaiming', 'engine.close(3000)', 'services.close']);
    expect(exit.mock.calls).toEqual([[1]]);
  });

  it('exports the last spans after the services closed, and waits for a collector that does not answer only so long, still exiting 0', async () => {
    vi.useFakeTimers();
    const calls: string[] = [];
    const { deps, exit } = fakeDeps(calls);
    deps.tracing = { shutdown: () => (calls.push('tracing.shutdown'), new Promise<void>(() => {})) };
    void gracefulShutdown(deps)('SIGTERM');
    await vi.advanceTimersByTimeAsync(TRACING_FLUSH_MS - 1);
    expect(calls.at(-1)).toBe('tracing.shutdown');
    expect(calls.indexOf('tracing.shutdown')).toBeGreaterThan(calls.indexOf('services.close'));
    expect(exit).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(exit.mock.calls).toEqual([[0]]);
  });

  it('exits 1 by its timer, grace plus the margin after the signal, when a close never returns', async () => {
    vi.useFakeTimers();
    const calls: string[] = [];
    const { deps, exit } = fakeDeps(calls, { servicesClose: () => new Promise<void>(() => {}) });
    void gracefulShutdown(deps)('SIGTERM');
    await vi.advanceTimersByTimeAsync(3_000 + SHUTDOWN_MARGIN_MS - 1);
    expect(exit).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(exit.mock.calls).toEqual([[1]]);
  });
});

describe('closing the services', () => {
  it('runs every close step when one fails: the engine still closes (and releases its leases) and the store closes', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'switchyard-close-'));
    try {
      const store = await openEmbeddedStore({ dataDir: null });
      const storeClose = vi.spyOn(store, 'close');
      const services = await openServices(loadConfig({ DATA_DIR: dataDir }), logger, { store, background: false });
      const engineClose = vi.spyOn(services.engine, 'close');
      services.sweeper.stop = () => {
        throw new Error('sweeper stuck');
      };
      await expect(services.close()).rejects.toThrow('sweeper stuck');
      expect(engineClose).toHaveBeenCalledOnce();
      expect(storeClose).toHaveBeenCalledOnce();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
