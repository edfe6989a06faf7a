/**
 * Repair of a data directory whose files hold unreadable entries, behind
 * `npm run store:repair -- <DATA_DIR>` (scripts/store-repair.ts): keeps every readable entry of
 * the snapshot and the journal and drops only what cannot be read.
 *
 * - An unreadable line that ends with an intact entry (the mark of older versions, which appended
 *   the next entry onto the bytes of a write a full disk had cut short) keeps that entry and drops
 *   only the bytes before it.
 * - An incomplete last journal line (no newline) is dropped, as opening does: it was never
 *   acknowledged.
 * - A file with nothing to drop is left untouched. A repaired file replaces the original
 *   atomically (rename), and the original stays next to it as `<file>.corrupt-<timestamp>`.
 * - The directory is locked meanwhile, so a running instance makes the repair refuse; afterwards
 *   the store is opened once to check that it loads.
 */
import { closeSync, copyFileSync, existsSync, linkSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DataDirLockedError, lockDataDir, type DataDirLockTimings } from './data-dir-lock.ts';
import { JOURNAL_FILE, SNAPSHOT_FILE } from './data-dir.ts';
import { openEmbeddedStore } from './embedded-store.ts';
import { decodeEntry } from './journal-entry.ts';
import { readLines, type Line } from './line-reader.ts';
import { fsyncDirectory, writeLinesDurably } from './sync-fs.ts';
import { processWarning, type WarningSink } from './warnings.ts';

/** Bytes dropped from one line of a file. */
export interface DroppedLine {
  /** 1-based line number in the original file. */
  readonly line: number;
  /** Byte offset of the line in the original file (the dropped bytes start there). */
  readonly offset: number;
  /** How many bytes were dropped (newline excluded). */
  readonly bytes: number;
  /** Why the line could not be read. */
  readonly reason: string;
  /** True when an intact entry at the end of the line was kept (only the bytes before it were dropped). */
  readonly salvaged: boolean;
}

/** What the repair did to one file. */
export interface FileRepair {
  /** Absolute path of the file. */
  readonly path: string;
  /** Entries the file holds after the repair. */
  readonly kept: number;
  /** Dropped lines, in file order; empty when the file was intact (and left untouched). */
  readonly dropped: readonly DroppedLine[];
  /** Where the original was kept, when the file was rewritten. */
  readonly backup: string | undefined;
}

/** The outcome of {@link repairDataDir}. */
export interface RepairReport {
  /** Absolute path of the data directory. */
  readonly dataDir: string;
  /** The snapshot and journal, when present. */
  readonly files: readonly FileRepair[];
  /** Why the store still does not open after the repair (e.g. inconsistent unique indexes); undefined when it opens. */
  readonly openError: string | undefined;
}

/** Options of {@link repairDataDir}. */
export interface RepairOptions {
  /** Lock timings (milliseconds), as for the store. */
  lock?: DataDirLockTimings;
  /** Clock of the backup names; default now. */
  now?: () => Date;
  /** Receives warnings (e.g. an abandoned lock taken over); default `process.emitWarning`. */
  warn?: WarningSink;
}

/**
 * Repairs the data directory `dataDir` (see the module comment). Rejects when it does not exist,
 * when an instance has it open (the error says so), and with fs errors (a file being rewritten is
 * then left as it was). A store that still does not open is reported in `openError`, not thrown.
 */
export async function repairDataDir(dataDir: string, options: RepairOptions = {}): Promise<RepairReport> {
  const dir = resolve(dataDir);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new Error(`${dir} is not a data directory: it does not exist`);
  const warn = options.warn ?? processWarning;
  const stamp = (options.now?.() ?? new Date()).toISOString().replace(/[:.]/g, '-');
  const lock = await lockDataDir(dir, { ...options.lock, warn }).catch((error: unknown) => {
    if (error instanceof DataDirLockedError) throw new Error(`refusing to repair while the store is open: ${error.message}`, { cause: error });
    throw error;
  });
  const files: FileRepair[] = [];
  try {
    for (const [name, isJournal] of [[SNAPSHOT_FILE, false], [JOURNAL_FILE, true]] as const) {
      const path = join(dir, name);
      if (existsSync(path)) files.push(repairFile(path, isJournal, stamp));
    }
  } finally {
    await lock.release();
  }
  return { dataDir: dir, files, openError: await openError(dir, options.lock, warn) };
}

/** Repairs one file: rewritten without its unreadable bytes (original kept as a backup), or left untouched when it has none. */
function repairFile(path: string, isJournal: boolean, stamp: string): FileRepair {
  const temporary = `${path}.repair-tmp`;
  const dropped: DroppedLine[] = [];
  let kept = 0;
  function* keptLines(): Generator<string> {
    for (const line of readLines(path)) {
      const verdict = judge(line, isJournal);
      if (verdict.dropped) dropped.push(verdict.dropped);
      if (verdict.keep === undefined) continue;
      kept += 1;
      yield verdict.keep;
    }
  }
  const fd = openSync(temporary, 'w');
  try {
    try {
      writeLinesDurably(fd, keptLines());
    } finally {
      closeSync(fd);
    }
    if (dropped.length === 0) {
      rmSync(temporary, { force: true });
      return { path, kept, dropped, backup: undefined };
    }
    const backup = `${path}.corrupt-${stamp}`;
    keepOriginal(path, backup);
    renameSync(temporary, path);
    fsyncDirectory(resolve(path, '..'));
    return { path, kept, dropped, backup };
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** What to keep of `line` (its text, or the intact entry at its end) and what was dropped. */
function judge(line: Line, isJournal: boolean): { keep?: string; dropped?: DroppedLine } {
  if (isJournal && !line.terminated) {
    return { dropped: dropping(line, line.bytes, 'incomplete last line: an append cut short, never acknowledged', false) };
  }
  const failure = decodeFailure(line.text);
  if (failure === undefined) return { keep: line.text };
  const start = line.text.lastIndexOf('{"op":');
  const tail = start > 0 ? line.text.slice(start) : undefined;
  if (tail !== undefined && decodeFailure(tail) === undefined) {
    return { keep: tail, dropped: dropping(line, line.bytes - Buffer.byteLength(tail), failure, true) };
  }
  return { dropped: dropping(line, line.bytes, failure, false) };
}

function dropping(line: Line, bytes: number, reason: string, salvaged: boolean): DroppedLine {
  return { line: line.number, offset: line.start, bytes, reason, salvaged };
}

/** Why `text` is no readable entry; undefined when it is one. */
function decodeFailure(text: string): string | undefined {
  try {
    decodeEntry(text);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Keeps the file at `path` as `backup`: a hard link (no space needed), else a copy. */
function keepOriginal(path: string, backup: string): void {
  try {
    linkSync(path, backup);
  } catch {
    copyFileSync(path, backup);
  }
}

/** Why the store in `dir` does not open, or undefined when it opens (it is closed again at once). */
async function openError(dir: string, lock: DataDirLockTimings | undefined, warn: WarningSink): Promise<string | undefined> {
  try {
    const store = await openEmbeddedStore({ dataDir: dir, lock, onWarning: warn });
    await store.close();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** `report` as the lines the repair command prints (newline-terminated). */
export function formatRepairReport(report: RepairReport): string {
  const lines = [`Repair of data directory ${report.dataDir}:`];
  if (report.files.length === 0) lines.push('  no snapshot.jsonl nor journal.jsonl: nothing to repair');
  for (const file of report.files) {
    const name = file.path.slice(report.dataDir.length + 1);
    if (file.dropped.length === 0) {
      lines.push(`  ${name}: intact, ${file.kept} entries, left untouched`);
      continue;
    }
    lines.push(`  ${name}: kept ${file.kept} entries, dropped unreadable bytes on ${file.dropped.length} line(s):`);
    for (const drop of file.dropped) {
      const what = drop.salvaged ? `dropped ${drop.bytes} bytes before an intact entry, which was kept` : `dropped the line (${drop.bytes} bytes)`;
      lines.push(`    line ${drop.line}, byte offset ${drop.offset}: ${what}: ${drop.reason}`);
    }
    lines.push(`    original kept as ${file.backup}`);
  }
  const repaired = report.files.some((file) => file.dropped.length > 0);
  if (!repaired && report.files.length > 0) lines.push('  nothing to repair: every entry is readable');
  lines.push(report.openError === undefined ? '  the store opens: OK' : `  the store still does not open: ${report.openError}`);
  return `${lines.join('\n')}\n`;
}
