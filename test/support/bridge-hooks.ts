/**
 * Vitest hooks around ./bridge.ts (kept apart so that benches can import the bridge clients
 * without vitest, whose hooks only load inside a test run).
 */
import { afterAll, beforeAll } from 'vitest';
import { bridgeInProcess, type BridgeClient, type BridgeFlags } from './bridge.ts';
import { startService, type StartOptions, type TestService } from './service.ts';

/**
 * For a test file: starts the API (./service.ts, with `options`) and an in-process bridge on it
 * (with `flags`) before the tests, hands both to `ready`, and closes them after.
 */
export function useServiceAndBridge(ready: (svc: TestService, bridge: BridgeClient) => void, flags: BridgeFlags = [], options: StartOptions = {}): void {
  let svc: TestService | undefined;
  let bridge: BridgeClient | undefined;
  beforeAll(async () => {
    svc = await startService(options);
    bridge = await bridgeInProcess(svc.baseUrl, flags);
    ready(svc, bridge);
  });
  afterAll(async () => {
    await bridge?.close();
    await svc?.close();
  });
}
