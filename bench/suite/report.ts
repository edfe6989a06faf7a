/**
 * The benchmark suite's report: the table printed (figure | measured | goal | met?), the JSON
 * written under bench/results/, and the description of the machine that measured it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { arch, cpus, hostname, release, totalmem, type } from 'node:os';
import { join } from 'node:path';
import type { ProfileSummary } from './cpu-profile.ts';
import { meetsGoal, type Figure } from './figure.ts';

/** The machine a report was measured on. */
export interface MachineDescription {
  /** `Linux 6.8.0 x64` */
  readonly os: string;
  /** Logical CPUs. */
  readonly cpus: number;
  readonly cpuModel: string;
  /** Total memory, MB. */
  readonly memoryMb: number;
  /** `v20.19.0` */
  readonly node: string;
  readonly host: string;
}

/** Everything one suite run measured. */
export interface SuiteReport {
  /** Shrunk workloads (`--quick`): figures prove the suite runs, they are not comparable to goals. */
  readonly quick: boolean;
  /** ISO time the suite started. */
  readonly startedAt: string;
  /** Wall-clock seconds of the whole suite. */
  readonly seconds: number;
  readonly machine: MachineDescription;
  readonly figures: ReadonlyArray<Figure & { readonly met: boolean | null }>;
  /** Peak resident set size of the process over the whole suite, MB. */
  readonly peakRssMb: number;
  /** Bytes written to the data directories of every workload. */
  readonly dataDirBytes: number;
  /** Workloads that failed (their figures are null), as `workload: message`. */
  readonly errors: readonly string[];
}

/** Describes this machine (os, cpus, memory, Node version, host name). */
export function describeMachine(): MachineDescription {
  const processors = cpus();
  return {
    os: `${type()} ${release()} ${arch()}`,
    cpus: processors.length,
    cpuModel: processors[0]?.model.trim() ?? 'unknown',
    memoryMb: Math.round(totalmem() / 1024 / 1024),
    node: process.version,
    host: hostname(),
  };
}

/** `value` for the table: integers and values above 100 rounded with thousands separated, two decimals below 10, one between. */
function formatNumber(value: number): string {
  if (Number.isInteger(value) || Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(Math.abs(value) < 10 ? 2 : 1);
}

/**
 * The report as a Markdown table (figure | measured | goal | met?) followed by peak RSS,
 * data-directory bytes, the top of the CPU profile of each figure that misses its goal, and errors.
 */
export function renderTable(report: SuiteReport): string {
  const rows = report.figures.map((figure) => {
    const measured = figure.measured === null ? '—' : `${formatNumber(figure.measured)} ${figure.unit}`;
    const goal = figure.goal === null ? '—' : `${figure.goal.op === '>=' ? '≥' : '≤'} ${formatNumber(figure.goal.value)} ${figure.unit}`;
    const met = figure.met === null ? '—' : figure.met ? 'yes' : 'no';
    return [figure.label, figure.note ? `${measured} (${figure.note})` : measured, goal, met];
  });
  const lines = [
    '| figure | measured | goal | met? |',
    '| --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    '',
    `peak RSS: ${report.peakRssMb.toFixed(0)} MB; DATA_DIR bytes written: ${(report.dataDirBytes / 1024 / 1024).toFixed(1)} MB; ` +
      `${report.seconds.toFixed(0)} s; ${report.quick ? 'QUICK (shrunk workloads, no goal applies)' : 'full'}`,
    `machine: ${report.machine.os}, ${report.machine.cpus} × ${report.machine.cpuModel}, ${report.machine.memoryMb} MB, Node ${report.machine.node}`,
  ];
  const missed = report.figures.filter((figure) => figure.met === false && figure.profile);
  if (missed.length > 0) {
    lines.push('', 'Where the service spent its CPU in the figures that miss their goal (top self time, share of busy time):');
    for (const figure of missed) lines.push(`- ${figure.label}: ${profileLine(figure.profile!)}`);
  }
  for (const error of report.errors) lines.push(`ERROR ${error}`);
  return lines.join('\n');
}

/** The first functions of a profile's top, as `name (location) 12.3 %, ...`. */
function profileLine(profile: ProfileSummary, count = 6): string {
  return profile.top
    .slice(0, count)
    .map((entry) => `${entry.name}${entry.location ? ` (${entry.location})` : ''} ${entry.percent.toFixed(1)} %`)
    .join(', ');
}

/** Adds `met` to each figure: whether it meets its goal, or null for all of them when the goals do not `apply` (quick run). */
export function judged(figures: readonly Figure[], apply: boolean): SuiteReport['figures'] {
  return figures.map((figure) => ({ ...figure, met: apply ? meetsGoal(figure) : null }));
}

/**
 * Writes `report` as JSON to `<dir>/latest.json` and, when `save`, also to
 * `<dir>/<YYYY-MM-DD>-<host>.json`; returns the paths written. Throws fs errors.
 */
export function writeReport(report: SuiteReport, dir: string, save: boolean): string[] {
  mkdirSync(dir, { recursive: true });
  const text = `${JSON.stringify(report, null, 2)}\n`;
  const paths = [join(dir, 'latest.json')];
  if (save) paths.push(join(dir, `${report.startedAt.slice(0, 10)}-${report.machine.host.replace(/[^A-Za-z0-9._-]/g, '_')}.json`));
  for (const path of paths) writeFileSync(path, text);
  return paths;
}
