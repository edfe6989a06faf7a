/** `npm run docs:config` (part of `npm run docs`): regenerates docs/reference/configuration.md from the configuration schema. */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CONFIG_DOCS_FILE, renderConfigDocs } from '../config-docs.ts';

await mkdir(new URL('.', CONFIG_DOCS_FILE), { recursive: true });
await writeFile(CONFIG_DOCS_FILE, renderConfigDocs());
console.log(`wrote ${fileURLToPath(CONFIG_DOCS_FILE)}`);
