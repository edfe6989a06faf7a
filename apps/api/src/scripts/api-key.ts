/**
 * `npm run api-key -- <name> [scope ...] [--file <keys.json>]`: makes a random API key for a
 * service account and prints it once on stdout; with `--file`, adds its entry (name, SHA-256,
 * scopes) to that keys file (created, with its directory, when missing), else prints the entry on stderr to paste.
 * Scopes default to all three. The key itself is stored nowhere. Exit 2 on bad arguments.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { ApiKeyVerifier, newApiKey } from '../auth/api-keys.ts';
import { SCOPES, isScope } from '../auth/scopes.ts';

function fail(message: string): never {
  console.error(`api-key: ${message}\nusage: npm run api-key -- <name> [${SCOPES.join('|')} ...] [--file keys.json]`);
  process.exit(2);
}

const { values, positionals } = parseArgs({ options: { file: { type: 'string' } }, allowPositionals: true, strict: true });
const [name, ...scopes] = positionals;
if (name === undefined || name.trim() === '') fail('a name is required');
for (const scope of scopes) if (!isScope(scope)) fail(`unknown scope '${scope}'`);
const { key, entry } = newApiKey(name, scopes.length > 0 ? scopes : SCOPES);

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
  console.error(`added '${name}' (${entry.scopes.join(', ')}) to ${values.file}`);
}
console.log(key);
