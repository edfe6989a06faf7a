/**
 * Where a tool call comes from when Switchyard itself makes it: its MCP executor sends the run,
 * node and iteration path of the step in the call's `_meta` (runner `RUN_META_KEYS`, repeated here
 * because the bridge depends on the REST contract only). Environment variables
 * `SWITCHYARD_RUN_ID`, `SWITCHYARD_NODE_ID`, `SWITCHYARD_ITERATION_PATH` are the fallback for an
 * agent process started for a step.
 */
const META_KEYS = { runId: 'io.switchyard/run-id', nodeId: 'io.switchyard/node-id', iterationPath: 'io.switchyard/iteration-path' } as const;

/** The step a call acts for, as far as the call's `_meta` and the environment tell. */
export function callerStep(meta: Record<string, unknown>, env: Record<string, string | undefined> = process.env): { runId?: string; nodeId?: string; iterationPath?: string } {
  const pick = (key: keyof typeof META_KEYS, variable: string) => {
    const value = meta[META_KEYS[key]];
    return typeof value === 'string' && value !== '' ? value : env[variable] || undefined;
  };
  return { runId: pick('runId', 'SWITCHYARD_RUN_ID'), nodeId: pick('nodeId', 'SWITCHYARD_NODE_ID'), iterationPath: pick('iterationPath', 'SWITCHYARD_ITERATION_PATH') };
}
