/**
 * `npm run api-key -- <name> [scope ...] [--subject <id>] [--group <name> ...] [--file <keys.json>]`:
 * makes a random API key for a service account and prints it once on stdout; with `--file`, adds
 * its entry (name, SHA-256, scopes, and `subject` / `groups` when given) to that keys file
 * (created, with its directory, when missing), else prints the entry on stderr to paste.
 * Scopes default to `workflows-read`, `workflows-write` and `workflows-control`: `workflows-admin`
 * (owner of every workflow) and `events-write` (post events, which start any workflow with a matching trigger) only when named. `--subject` is the key's stable user id (principal
 * `user:<id>`; default `api-key:<name>`), each `--group` a group it belongs to (principal
 * `group:<name>`; issue #18 item 1). The key itself is stored nowhere. Exit 2 on bad arguments.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiKeyVerifier, newApiKey } from '../auth/api-keys.ts';
import { GROUP_NAME_RULE, MAX_GROUPS, isPrincipalName } from '../auth/groups.ts';
import { ADMIN_SCOPE } from '../auth/identity.ts';
import { SCOPES, isScope } from '../auth/scopes.ts';

/** The scopes of a key when none are named: all but the admin scope and `events-write`, which must be asked for. */
const DEFAULT_SCOPES = SCOPES.filter((scope) => scope !== ADMIN_SCOPE && scope !== 'events-write');

function fail(message: string): never {
  console.error(`api-key: ${message}\nusage: npm run api-key -- <name> [${SCOPES.join('|')} ...] [--subject <id>] [--group <name> ...] [--file keys.json]`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: { file: { type: 'string' }, subject: { type: 'string' }, group: { type: 'string', multiple: true } },
    allowPositionals: true,
    strict: true,
  });
} catch (error) {
  fail((error as Error).message);
}
const { values, positionals } = parsed;
const [name, ...scopes] = positionals;
if (name === undefined || name.trim() === '') fail('a name is required');
for (const scope of scopes) if (!isScope(scope)) fail(`unknown scope '${scope}'`);
if (values.subject !== undefined && !isPrincipalName(values.subject)) fail(`--subject must be ${GROUP_NAME_RULE}`);
const groups = [...new Set(values.group ?? [])];
for (const group of groups) if (!isPrincipalName(group)) fail(`--group '${group.slice(0, 200)}' is not a group name (${GROUP_NAME_RULE})`);
if (groups.length > MAX_GROUPS) fail(`at most ${MAX_GROUPS} --group`);
const { key, entry } = newApiKey(name, scopes.length > 0 ? scopes : DEFAULT_SCOPES, { subject: values.subject, groups });

if (values.file === undefined) {
  console.error(`add to the keys file's "keys": ${JSON.stringify(entry)}`);
} else {
  let file: { keys: unknown[] } = { keys: [] };
  try {
    file = JSON.parse(await readFile(values.file, 'utf8')) as { keys: unknown[] };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') fail(`${values.file}: ${(error as Error).message}`);
  }
  const next = { ...file, keys: [...(Array.isArray(file.keys) ? file.keys : []), entry] };
  try {
    new ApiKeyVerifier(next, values.file);
  } catch (error) {
    fail((error as Error).message);
  }
  await mkdir(dirname(values.file), { recursive: true });
  await writeFile(values.file, `${JSON.stringify(next, null, 2)}\n`, { mode: 0o600 });
  const principal = [`user:${entry.subject ?? `api-key:${name}`}`, ...(entry.groups ?? []).map((group) => `group:${group}`)].join(', ');
  console.error(`added '${name}' (${entry.scopes.join(', ')}; ${principal}) to ${values.file}`);
}
console.log(key);
