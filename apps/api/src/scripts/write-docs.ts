/** `npm run docs`: regenerates the generated documentation pages (docs/reference/http-api.md). */
import { writeFile } from 'node:fs/promises';
import { HTTP_API_PAGE, renderHttpApiPage } from '../docs/http-api-page.ts';

await writeFile(HTTP_API_PAGE, await renderHttpApiPage());
console.log(`wrote ${HTTP_API_PAGE}`);
