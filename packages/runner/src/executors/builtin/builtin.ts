/**
 * Executor kind `builtin`: built-in executors, for tests and benchmarks only: they have no side
 * effects and need no configuration. Every registry holds them as `builtin.echo`, `builtin.fail` and
 * `builtin.sleep`; a registry file may add aliases (`{ "kind": "builtin", "name": "echo" }`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import Type, { type Static } from 'typebox';
import { abortedError } from '../shared/abort.ts';
import { defineKind, entrySchema } from '../kind.ts';
import { ExecutorError } from '../types.ts';
import type { Executor, ExecutorCall } from '../types.ts';

/** Names of the built-in executors. */
export const BUILTIN_NAMES = ['echo', 'fail', 'sleep'] as const;

/** One of {@link BUILTIN_NAMES}. */
export type BuiltinName = (typeof BUILTIN_NAMES)[number];

/** True when `name` is one of {@link BUILTIN_NAMES}. */
export function isBuiltinName(name: unknown): name is BuiltinName {
  return (BUILTIN_NAMES as readonly unknown[]).includes(name);
}

/** What the catalogue says about each built-in when its entry has no `description`. */
const BUILTIN_DESCRIPTIONS: Record<BuiltinName, string> = {
  echo: 'Built-in echo: returns { arguments, input } (tests and benchmarks)',
  fail: 'Built-in fail: fails retryably (arguments.times: only the first attempts; arguments.message) (tests and benchmarks)',
  sleep: 'Built-in sleep: waits arguments.ms milliseconds (default 100), then echoes (tests and benchmarks)',
};

/** Default `arguments.ms` of `sleep`, in milliseconds. */
export const DEFAULT_SLEEP_MS = 100;

/** Largest delay Node timers accept (ms); longer ones would fire after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** What `echo` (and `fail`/`sleep` once they succeed) resolve with. */
export interface EchoOutput {
  arguments: Record<string, unknown>;
  input: unknown;
}

type BuiltinHandler = (call: ExecutorCall) => Promise<unknown>;

const HANDLERS: Record<BuiltinName, BuiltinHandler> = {
  /** Resolves with `{ arguments, input }`. */
  echo: async (call) => echo(call),

  /**
   * Rejects with a retryable ExecutorError. With `arguments.times` (number), only attempts
   * `<= times` fail and later ones succeed like echo. Message: `arguments.message` if a string.
   */
  fail: async (call) => {
    const times = optionalNumber(call.arguments, 'times');
    if (times !== undefined && call.attempt > times) return echo(call);
    const message = call.arguments['message'];
    throw new ExecutorError(typeof message === 'string' ? message : `builtin fail: attempt ${call.attempt} failed`, {
      retryable: true,
    });
  },

  /**
   * Waits `arguments.ms` milliseconds (default 100), then resolves like echo. Rejects at once when
   * the call's signal aborts (see `abortedError`: `cancelled`, or a retryable `timed out after N s`);
   * the timer is cleared.
   */
  sleep: async (call) => {
    const ms = optionalNumber(call.arguments, 'ms') ?? DEFAULT_SLEEP_MS;
    if (ms < 0 || ms > MAX_TIMER_MS) {
      throw new ExecutorError(`builtin sleep: arguments.ms must be between 0 and ${MAX_TIMER_MS}, got ${ms}`, {
        retryable: false,
      });
    }
    try {
      await delay(ms, undefined, { signal: call.signal });
    } catch (error) {
      if (call.signal.aborted) throw abortedError(call.signal);
      throw error;
    }
    return echo(call);
  },
};

/**
 * Creates the built-in executor `name` under registry key `key`, with a default call limit of
 * `timeoutMs`. Bad arguments (e.g. a non-number `times` or `ms`) reject with a non-retryable ExecutorError.
 */
export function createBuiltinExecutor(key: string, name: BuiltinName, timeoutMs: number): Executor {
  const handler = HANDLERS[name];
  return { kind: 'builtin', key, timeoutMs, invoke: handler };
}

/** Registry entry `{ "kind": "builtin", "name": "echo" | "fail" | "sleep", "timeoutSeconds"? }`. */
export const BuiltinEntry = entrySchema('builtin', {
  name: Type.Enum([...BUILTIN_NAMES], { description: 'The built-in this key is an alias of' }),
});

/** Executor kind `builtin`: one entry of the registry's `executors` (an alias of a built-in). */
export type BuiltinExecutorConfig = Static<typeof BuiltinEntry>;

/** Registry keys of the built-ins, present in every registry: `builtin.echo`, ... */
export const BUILTIN_KEYS: readonly string[] = BUILTIN_NAMES.map((name) => `builtin.${name}`);

/** The `builtin` kind (see `kind.ts`): its built-ins are presets of every registry. Built-ins stay allowed in `a2aPool`, for tests. */
export const builtinKind = defineKind({
  kind: 'builtin',
  schema: BuiltinEntry,
  a2aPool: true,
  presets: {
    prefix: 'builtin.',
    label: 'the built-ins',
    entries: BUILTIN_NAMES.map((name, index) => [BUILTIN_KEYS[index]!, { name }] as const),
  },
  resolve: (entry): { name: BuiltinName; description?: string } =>
    entry.description === undefined ? { name: entry.name } : { name: entry.name, description: entry.description },
  open: () => ({
    create: (key, entry) => createBuiltinExecutor(key, entry.name, entry.timeoutMs),
    describe: async (_key, entry) => ({
      description: entry.description ?? BUILTIN_DESCRIPTIONS[entry.name],
      available: true,
      builtin: entry.name,
    }),
    close: async () => {},
  }),
});

function echo(call: ExecutorCall): EchoOutput {
  return { arguments: call.arguments, input: call.input };
}

/** `args[name]` when it is a finite number, undefined when absent; anything else is rejected. */
function optionalNumber(args: Record<string, unknown>, name: string): number | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  throw new ExecutorError(`arguments.${name} must be a finite number, got ${JSON.stringify(value)}`, {
    retryable: false,
  });
}
