/**
 * Static API keys for service accounts (issue 9 item 7): `SWITCHYARD_API_KEYS_FILE` names a JSON
 * file `{ "keys": [{ "name", "sha256": "<hex SHA-256 of the key>", "scopes": [...], "subject"?, "groups"? }] }`.
 * Only hashes are configured; a presented key is hashed and compared with every configured hash in
 * constant time. `npm run api-key -- <name> [scopes...] [--subject <id>] [--group <name> ...]`
 * makes a key and its file entry.
 *
 * Principals (issue #18 item 1): a key's caller is `user:<subject>` (`subject` defaults to
 * `api-key:<name>`, what files written before `subject` existed keep meaning) plus `group:<name>`
 * for each of its `groups` (bounded as in groups.ts); its username is `name`.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import Type, { type Static } from 'typebox';
import { Value } from 'typebox/value';
import { MAX_PRINCIPAL_NAME_LENGTH } from '@switchyard/domain';
import { GroupNames, PRINCIPAL_NAME_PATTERN } from './groups.ts';
import { SCOPES } from './scopes.ts';
import type { CallerIdentity } from './identity.ts';

/** One configured key. */
const ApiKeyEntry = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Who the key is for; becomes the username (and the user id `api-key:<name>` without `subject`)' }),
    sha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'Hex SHA-256 of the key' }),
    scopes: Type.Array(Type.Enum([...SCOPES]), { uniqueItems: true }),
    subject: Type.Optional(
      Type.String({ pattern: PRINCIPAL_NAME_PATTERN, maxLength: MAX_PRINCIPAL_NAME_LENGTH, description: 'The stable user id (principal `user:<subject>`); default `api-key:<name>`' }),
    ),
    groups: Type.Optional(GroupNames),
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

/** One entry of the keys file, as {@link newApiKey} makes it. */
export interface ApiKeyFileEntry {
  name: string;
  sha256: string;
  scopes: string[];
  /** Present only when given. */
  subject?: string;
  /** Present only when some are given. */
  groups?: string[];
}

/**
 * A new random key (`sy_` + 32 bytes base64url) and its file entry, with `subject` and `groups`
 * when given (unchecked here: {@link ApiKeyVerifier} checks the file the entry goes into).
 */
export function newApiKey(
  name: string,
  scopes: readonly string[],
  principal: { subject?: string; groups?: readonly string[] } = {},
): { key: string; entry: ApiKeyFileEntry } {
  const key = `sy_${randomBytes(32).toString('base64url')}`;
  const entry: ApiKeyFileEntry = { name, sha256: hashApiKey(key), scopes: [...scopes] };
  if (principal.subject !== undefined) entry.subject = principal.subject;
  if (principal.groups !== undefined && principal.groups.length > 0) entry.groups = [...principal.groups];
  return { key, entry };
}

/** A configured key, ready to compare. */
interface ConfiguredKey {
  name: string;
  userId: string;
  digest: Buffer;
  scopes: string[];
  groups: string[];
}

/** Checks presented keys against the configured hashes. */
export class ApiKeyVerifier {
  readonly #keys: readonly ConfiguredKey[];

  /**
   * Throws an Error naming the problem when `file` is not a valid keys file (bad shape — an
   * unknown scope, a subject or group name that is not 1–200 characters without whitespace or
   * commas, more than 100 groups —, duplicate names or hashes).
   */
  constructor(file: unknown, source = 'SWITCHYARD_API_KEYS_FILE') {
    if (!Value.Check(ApiKeysFile, file)) {
      const problems = [...Value.Errors(ApiKeysFile, file)].slice(0, 5).map((e) => `${e.instancePath || '$'}: ${e.message}`);
      throw new Error(`${source} is not a valid API keys file ({ "keys": [{ "name", "sha256", "scopes", "subject"?, "groups"? }] }): ${problems.join('; ')}`);
    }
    const names = new Set<string>();
    const digests = new Set<string>();
    for (const entry of file.keys) {
      if (names.has(entry.name)) throw new Error(`${source}: the key name '${entry.name}' appears twice`);
      if (digests.has(entry.sha256.toLowerCase())) throw new Error(`${source}: the key '${entry.name}' has the same sha256 as another key`);
      names.add(entry.name);
      digests.add(entry.sha256.toLowerCase());
    }
    this.#keys = file.keys.map((entry) => ({
      name: entry.name,
      userId: entry.subject ?? `api-key:${entry.name}`,
      digest: Buffer.from(entry.sha256, 'hex'),
      scopes: [...entry.scopes],
      groups: [...(entry.groups ?? [])],
    }));
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

  /**
   * The identity of `key` (user id = its `subject`, username = its `name`, its scopes and groups);
   * null for an unknown key. Compares with every configured hash (no early exit).
   */
  verify(key: string): CallerIdentity | null {
    const digest = createHash('sha256').update(key, 'utf8').digest();
    let match: ConfiguredKey | null = null;
    for (const entry of this.#keys) {
      if (timingSafeEqual(entry.digest, digest) && match === null) match = entry;
    }
    if (match === null) return null;
    return { userId: match.userId, username: match.name, scopes: [...match.scopes], groups: [...match.groups], method: 'api-key', unrestricted: false };
  }
}
