/**
 * CPU profiles of the service's workloads, taken inside the service process with V8's sampling
 * profiler (node:inspector, the same profiler as `node --cpu-prof`) and summed up as the top
 * self-time functions: what the report names as the cost left in each figure.
 */
import { Session } from 'node:inspector/promises';

/** One function of a profile's top list. */
export interface ProfiledFunction {
  /** Function name (`(garbage collector)`, `(program)` and `(idle)` are V8's own entries). */
  readonly name: string;
  /** `path[:line]` (1-based line) relative to the repository or node_modules; empty for V8's entries. */
  readonly location: string;
  /** Self time, milliseconds. */
  readonly selfMs: number;
  /** Self time as a share of the profile's busy time (idle excluded), percent. */
  readonly percent: number;
}

/** The top of one profile. */
export interface ProfileSummary {
  /** Sampled time, milliseconds, and the part of it the process was busy (not idle). */
  readonly totalMs: number;
  readonly busyMs: number;
  readonly top: readonly ProfiledFunction[];
}

/** Sampling interval, microseconds: coarse enough to cost the measured workload next to nothing. */
const SAMPLING_INTERVAL_US = 1000;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A profiler of this process: {@link start}, then {@link stop} for the summary of what ran in between. */
export class CpuProfiler {
  #session: Session | undefined;

  /** Starts sampling. Rejects when a profile is already being taken. */
  async start(): Promise<void> {
    if (this.#session) throw new Error('a CPU profile is already being taken');
    const session = new Session();
    session.connect();
    try {
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
      await session.post('Profiler.start');
    } catch (error) {
      session.disconnect();
      throw error;
    }
    this.#session = session;
  }

  /** Stops sampling; resolves with the `topCount` functions of most self time. Rejects when no profile was started. */
  async stop(topCount = 12): Promise<ProfileSummary> {
    const session = this.#session;
    if (!session) throw new Error('no CPU profile is being taken');
    this.#session = undefined;
    try {
      const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: Profile };
      return summarize(profile, topCount);
    } finally {
      session.disconnect();
    }
  }
}

/** The top `topCount` functions by self time of `profile`. */
export function summarize(profile: Profile, topCount: number): ProfileSummary {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<string, { name: string; location: string; us: number }>();
  let totalUs = 0;
  let idleUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const node = nodes.get(profile.samples[i]!);
    const delta = profile.timeDeltas[i] ?? 0;
    if (!node) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    // The inspector's own call (Profiler.stop serializing the profile) is not the workload's.
    if (functionName === 'dispatch' && url === '') continue;
    totalUs += delta;
    const name = functionName || '(anonymous)';
    if (name === '(idle)') idleUs += delta;
    // Line numbers of code that tsx transformed say little (0 when it is one line): left out then.
    const location = url ? `${shortPath(url)}${lineNumber > 0 ? `:${lineNumber + 1}` : ''}` : '';
    const key = `${name} ${location}`;
    const entry = selfUs.get(key) ?? { name, location, us: 0 };
    entry.us += delta;
    selfUs.set(key, entry);
  }
  const busyUs = totalUs - idleUs;
  const top = [...selfUs.values()]
    .filter((entry) => entry.name !== '(idle)')
    .sort((a, b) => b.us - a.us)
    .slice(0, topCount)
    .map((entry) => ({ name: entry.name, location: entry.location, selfMs: round(entry.us / 1000), percent: busyUs > 0 ? round((100 * entry.us) / busyUs) : 0 }));
  return { totalMs: round(totalUs / 1000), busyMs: round(busyUs / 1000), top };
}

/** A script URL made short: relative to node_modules or to the repository. */
function shortPath(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const inModules = path.lastIndexOf('/node_modules/');
  if (inModules >= 0) return path.slice(inModules + '/node_modules/'.length);
  const inRepository = path.search(/\/(packages|apps|bench|test)\//);
  return inRepository >= 0 ? path.slice(inRepository + 1) : path;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
