/** `npm run openapi`: regenerates openapi/openapi.json from the route schemas. */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { OPENAPI_FILE, renderOpenApi } from '../openapi.ts';

await writeFile(OPENAPI_FILE, await renderOpenApi());
console.log(`wrote ${fileURLToPath(OPENAPI_FILE)}`);
