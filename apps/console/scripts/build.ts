/**
 * Builds the console (issue #19) into apps/console/dist/: `console.js` (src/main.tsx and its
 * imports bundled by esbuild: Preact, dagre, fetch-event-source; minified, ES2022), `console.css`
 * (the stylesheets the modules import, bundled) and `index.html`. The output is committed, so `npm install && npm start` serves the console with
 * no build step; `--check` exits 1 when dist/ differs from what the sources build (a test runs it).
 *
 *   npm run console:build            rewrites dist/
 *   npm run console:build -- --check checks dist/ is up to date
 */
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = `${ROOT}dist/`;

/** What dist/ holds: file name -> contents. */
export async function buildConsole(): Promise<Map<string, Uint8Array>> {
  const result = await build({
    entryPoints: [`${ROOT}src/main.tsx`],
    bundle: true,
    write: false,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    outfile: `${DIST}console.js`,
    logLevel: 'silent',
  });
  const files = new Map<string, Uint8Array>();
  // console.js, and console.css from the stylesheets the modules import.
  for (const file of result.outputFiles) files.set(file.path.slice(DIST.length), file.contents);
  files.set('index.html', await readFile(`${ROOT}src/index.html`));
  return files;
}

async function main(): Promise<void> {
  const files = await buildConsole();
  const check = process.argv.includes('--check');
  let stale = false;
  let gzipped = 0;
  for (const [name, contents] of files) {
    gzipped += gzipSync(contents, { level: 9 }).byteLength;
    if (check) {
      const current = await readFile(`${DIST}${name}`).catch(() => null);
      if (current === null || !Buffer.from(current).equals(Buffer.from(contents))) {
        console.error(`apps/console/dist/${name} is not what the sources build: run npm run console:build`);
        stale = true;
      }
    } else {
      await mkdir(DIST, { recursive: true });
      await writeFile(`${DIST}${name}`, contents);
    }
  }
  console.log(`console: ${files.size} files, ${(gzipped / 1024).toFixed(1)} KiB gzipped`);
  if (stale) process.exit(1);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
