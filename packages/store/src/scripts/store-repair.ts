/**
 * `npm run store:repair -- <DATA_DIR>`: repairs the embedded store's data directory after the
 * service refused to start on an unreadable entry (see embedded/repair.ts for what is kept and
 * dropped). Prints what it did on stdout; exits 0 when the store opens afterwards, 1 on failure
 * (the directory is in use, fs errors, or the store still does not open), 2 on a usage error.
 */
import { formatRepairReport, repairDataDir } from '../embedded/repair.ts';

const USAGE = 'usage: npm run store:repair -- <DATA_DIR>\n' +
  'Keeps every readable entry of <DATA_DIR>/snapshot.jsonl and journal.jsonl, drops the unreadable ones,\n' +
  'and keeps the originals as <file>.corrupt-<timestamp>. Stop the service first.\n';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--help' || args[0] === '-h')) {
  process.stdout.write(USAGE);
} else if (args.length !== 1 || args[0]!.startsWith('-')) {
  process.stderr.write(USAGE);
  process.exitCode = 2;
} else {
  try {
    const report = await repairDataDir(args[0]!, { warn: (message) => process.stderr.write(`note: ${message}\n`) });
    process.stdout.write(formatRepairReport(report));
    process.exitCode = report.openError === undefined ? 0 : 1;
  } catch (error) {
    process.stderr.write(`store:repair failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}
