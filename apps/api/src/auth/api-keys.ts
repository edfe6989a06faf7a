/**
 * Static API keys for service accounts (issue 9 item 7): `SWITCHYARD_API_KEYS_FILE` names a JSON
 * file `{ "keys": [{ "name", "sha256": "<hex SHA-256 of the key>", "scopes": [...] }] }`. Only
 * hashes are configured; a presented key is hashed and compared with every configured hash in
 * constant time. `npm run api-key -- <name> [scopes...]` makes a key and its file entry.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import { SCOPES } from './scopes.ts';
import type { CallerIdentity } from './identity.ts';

/** One configured key. */
const ApiKeyEntry = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Who the key is for; becomes the username (user id `api-key:<name>`)' }),
    sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'Hex SHA-256 of the key' }),
    scopes: Type.Array(Type.Enum([...SCOPES]), { uniqueItems: true }),
  },
  { additionalProperties: false },
);

/** The file's shape. */
export const ApiKeysFile = Type.Object({ keys: Type.Array(ApiKeyEntry) }, { additionalProperties: false });
export type ApiKeysFile = Static<typeof ApiKeysFile>;

/** The hex SHA-256 of `key`: what the file stores. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A new random key (`sy_` + 32 bytes base64url) and its file entry. */
export function newApiKey(name: string, scopes: readonly string[]): { key: string; entry: { name: string; sha256: string; scopes: string[] } } {
  const key = `sy_${randomBytes(32).toString('base64url')}`;
  return { key, entry: { name, sha256: hashApiKey(key), scopes: [...scopes] } };
}

/** Checks presented keys against the configured hashes. */
export class ApiKeyVerifier {
  readonly #keys: ReadonlyArray<{ name: string; digest: Buffer; scopes: string[] }>;

  /** Throws an Error naming the problem when `file` is not a valid keys file (bad shape, duplicate names or hashes). */
  constructor(file: unknown, source = 'SWITCHYARD_API_KEYS_FILE') {
    if (!Value.Check(ApiKeysFile, file)) {
      const problems = [...Value.Errors(ApiKeysFile, file)].slice(0, 5).map((e) => `${e.instancePath || '$'}: ${e.message}`);
      throw new Error(`${source} is not a valid API keys file ({ "keys": [{ "name", "sha256", "scopes" }] }): ${problems.join('; ')}`);
    }
    const names = new Set<string>();
    const digests = new Set<string>();
    for (const entry of file.keys) {
      if (names.has(entry.name)) throw new Error(`${source}: the key name '${entry.name}' appears twice`);
      if (digests.has(entry.sha256.toLowerCase())) throw new Error(`${source}: the key '${entry.name}' has the same sha256 as another key`);
      names.add(entry.name);
      digests.add(entry.sha256.toLowerCase());
    }
    this.#keys = file.keys.map((entry) => ({ name: entry.name, digest: Buffer.from(entry.sha256, 'hex'), scopes: [...entry.scopes] }));
  }

  /** Reads and checks the keys file at `path`; throws an Error naming the file when it cannot be read or is invalid. */
  static async fromFile(path: string): Promise<ApiKeyVerifier> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      throw new Error(`SWITCHYARD_API_KEYS_FILE '${path}' cannot be read: ${(error as Error).message}`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (error) {
      throw new Error(`SWITCHYARD_API_KEYS_FILE '${path}' is not JSON: ${(error as Error).message}`);
    }
    return new ApiKeyVerifier(parsed, `SWITCHYARD_API_KEYS_FILE '${path}'`);
  }

  /** The identity of `key`; null for an unknown key. Compares with every configured hash (no early exit). */
  verify(key: string): CallerIdentity | null {
    const digest = createHash('sha256').update(key, 'utf8').digest();
    let match: { name: string; scopes: string[] } | null = null;
    for (const entry of this.#keys) {
      if (timingSafeEqual(entry.digest, digest) && match === null) match = entry;
    }
    return match === null ? null : { userId: `api-key:${match.name}`, username: match.name, scopes: [...match.scopes], groups: [], method: 'api-key', unrestricted: false };
  }
}
