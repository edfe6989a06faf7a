/**
 * `npm run docs` (after `write-openapi.ts`): regenerates the generated documentation pages,
 * docs/reference/http-api.md (from the OpenAPI document) and docs/reference/configuration.md (from
 * the configuration schema). Tests fail when a committed page is stale.
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { CONFIG_DOCS_FILE, renderConfigDocs } from '../docs/config-page.ts';
import { HTTP_API_PAGE, renderHttpApiPage } from '../docs/http-api-page.ts';

await writeFile(HTTP_API_PAGE, await renderHttpApiPage());
console.log(`wrote ${HTTP_API_PAGE}`);
await writeFile(CONFIG_DOCS_FILE, renderConfigDocs());
console.log(`wrote ${fileURLToPath(CONFIG_DOCS_FILE)}`);
