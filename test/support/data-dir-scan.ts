/**
 * What a service keeps under DATA_DIR, readable for tests that check a secret or a token was
 * stored nowhere. The embedded store writes one JSON object a line with the document as base64
 * BSON, where a secret would not show in the raw bytes: every string value of every JSON line is
 * base64-decoded too (whatever its key), so BSON strings (UTF-8 bytes) can be searched as text.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One file under DATA_DIR: its path, raw bytes, and the decoded payloads of its JSON lines. */
export interface StoredFile {
  path: string;
  content: Buffer;
  payloads: string[];
}

/** Every file under `dir` (recursively) with its content and decoded payloads. */
export async function storedFiles(dir: string): Promise<StoredFile[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  const paths = entries.filter((entry) => entry.isFile()).map((entry) => join(entry.parentPath, entry.name));
  return Promise.all(
    paths.map(async (path) => {
      const content = await readFile(path);
      return { path, content, payloads: decodedPayloads(content) };
    }),
  );
}

/** Every string value of every JSON line of `content`, base64-decoded. */
function decodedPayloads(content: Buffer): string[] {
  const payloads: string[] = [];
  for (const line of content.toString('utf8').split('\n')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null) continue;
    for (const value of Object.values(parsed)) {
      if (typeof value === 'string') payloads.push(Buffer.from(value, 'base64').toString('utf8'));
    }
  }
  return payloads;
}
