/**
 * Who holds a data-directory lock, recorded in the lock so that another process can tell whether
 * that holder still runs. A pid alone cannot say (in a fresh container the new process often gets
 * the old one's pid, 1), so the record also names the machine boot (`boot_id`), the pid namespace
 * and the process's start time (Linux /proc). The holder is known to be gone only when it was in
 * this process's pid namespace on this boot and that pid no longer runs the same process; in any
 * other case (another container, another host, no /proc) liveness is unknown and only the lock's
 * staleness can tell (see data-dir-lock.ts).
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { hasErrorCode } from './sync-fs.ts';

/** The content of a lock's owner record (JSON). */
export interface LockOwner {
  readonly pid: number;
  readonly hostname: string;
  /** `/proc/sys/kernel/random/boot_id` of the holder's machine, when readable. */
  readonly bootId?: string;
  /** The holder's pid namespace (`readlink /proc/self/ns/pid`, e.g. `pid:[4026531836]`), when readable. */
  readonly pidNamespace?: string;
  /** The holder's start time in clock ticks since boot (`/proc/<pid>/stat` field 22), when readable. */
  readonly startTicks?: number;
  /** When the lock was taken (ISO 8601). */
  readonly since: string;
}

/** What can be said of a recorded owner: it runs, it surely does not, or there is no telling. */
export type OwnerStatus = 'alive' | 'gone' | 'unknown';

type Identity = Omit<LockOwner, 'since'>;

let self: Identity | undefined;

/** The owner record of this process, taken now. */
export function currentOwner(): LockOwner {
  self ??= identify();
  return { ...self, since: new Date().toISOString() };
}

/** The owner record in `text` (JSON of a {@link LockOwner}); undefined when malformed. */
export function parseOwner(text: string): LockOwner | undefined {
  try {
    const owner = JSON.parse(text) as Partial<LockOwner> | null;
    if (!owner || !Number.isSafeInteger(owner.pid) || typeof owner.hostname !== 'string') return undefined;
    return owner as LockOwner;
  } catch {
    return undefined;
  }
}

/** Whether the process `owner` describes is still running (see the module comment). */
export function ownerStatus(owner: LockOwner): OwnerStatus {
  self ??= identify();
  const comparable = self.bootId !== undefined && self.pidNamespace !== undefined && owner.startTicks !== undefined;
  if (!comparable || owner.bootId !== self.bootId || owner.pidNamespace !== self.pidNamespace) return 'unknown';
  const stat = readProcessStat(owner.pid);
  if (stat === 'unreadable') return 'unknown';
  return stat !== 'none' && !stat.exited && stat.startTicks === owner.startTicks ? 'alive' : 'gone';
}

/** `owner` in words for messages: `pid 12 on host web-1 since <ISO>` (`this process` when it is this one). */
export function describeOwner(owner: LockOwner): string {
  self ??= identify();
  const thisProcess = owner.pid === self.pid && owner.startTicks === self.startTicks && owner.pidNamespace === self.pidNamespace;
  return `${thisProcess ? 'this process, ' : ''}pid ${owner.pid} on host ${owner.hostname}, locked since ${owner.since}`;
}

function identify(): Identity {
  const identity = { pid: process.pid, hostname: hostname() };
  // /proc must be this process's own pid namespace's (`/proc/self` names our pid), or its pids mean nothing here.
  if (readOptional(() => readlinkSync('/proc/self')) !== String(process.pid)) return identity;
  const stat = readProcessStat(process.pid);
  const bootId = readOptional(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
  const pidNamespace = readOptional(() => readlinkSync('/proc/self/ns/pid'));
  if (typeof stat !== 'object' || !bootId || !pidNamespace) return identity;
  return { ...identity, bootId, pidNamespace, startTicks: stat.startTicks };
}

interface ProcessStat {
  readonly startTicks: number;
  /** A zombie or dead task: it has exited and only waits to be reaped. */
  readonly exited: boolean;
}

/** `/proc/<pid>/stat` parsed; 'none' when no such process, 'unreadable' when /proc cannot tell. */
function readProcessStat(pid: number): ProcessStat | 'none' | 'unreadable' {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    return hasErrorCode(error, 'ENOENT') ? 'none' : 'unreadable';
  }
  // "<pid> (<comm>) <state> <ppid> ..." where comm may hold spaces and parentheses; field 22 is starttime.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const startTicks = Number(fields[19]);
  if (!Number.isSafeInteger(startTicks)) return 'unreadable';
  return { startTicks, exited: fields[0] === 'Z' || fields[0] === 'X' };
}

function readOptional(read: () => string): string | undefined {
  try {
    return read() || undefined;
  } catch {
    return undefined;
  }
}
