#!/usr/bin/env node
// The bridge's command. Runs the bundle in ../dist (`npm run build:bridge`) while it is fresh: the
// manifest written with it names every source file it was built from, with size and mtime, and
// none may have changed (nor may a source file have appeared under a watched directory).
// Otherwise it runs the TypeScript sources through tsx's loader, as without a build, and says on
// stderr when it passes over a stale bundle. SWITCHYARD_MCP_FROM_SOURCE=1 always runs the sources.
//
// The bundle is CommonJS, compiled here with vm.Script and V8's code cache from the build's
// warm-up run (Node 20 has no code cache for ES modules): most of a cold start would otherwise be
// parsing and compiling it. V8 checks the cache and compiles normally when it does not fit.
// Only builtins are imported here, and nothing else runs before the bridge.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
/** What counts as a source file under a watched directory (scripts/build.ts uses the same test). */
const SOURCE_FILE = /\.(?:[cm]?ts|[cm]?js|json)$/;
/** Set by scripts/build.ts for its warm-up run: write the code cache there at exit. */
const CACHE_OUT = process.env.SWITCHYARD_MCP_CODE_CACHE_OUT;

/** The fresh bundle as { manifest, source }, or { stale: reason }, or null when there is none. */
function freshBundle() {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(DIST, 'manifest.json'), 'utf8'));
  } catch {
    return null;
  }
  if (manifest.format !== 1) return { stale: 'its manifest has an unknown format' };
  const root = resolve(DIST, manifest.root);
  for (const [path, [mtimeMs, size]] of Object.entries(manifest.files)) {
    let info;
    try {
      info = statSync(join(root, path));
    } catch {
      return { stale: `${path} is gone` };
    }
    if (info.mtimeMs !== mtimeMs || info.size !== size) return { stale: `${path} changed` };
  }
  for (const dir of manifest.watch) {
    const added = newSource(root, dir, manifest.files);
    if (added) return { stale: `${added} is new` };
  }
  let source;
  try {
    source = readFileSync(join(DIST, manifest.bundle), 'utf8');
  } catch {
    return { stale: 'the bundle is missing' };
  }
  // Written after the bundle; a mismatch means a build is under way.
  if (!source.startsWith(`/* switchyard-mcp build ${manifest.buildId} */`)) return { stale: 'it is being rebuilt' };
  return { manifest, source };
}

/** A source file under `dir` that the manifest does not list, if any. */
function newSource(root, dir, files) {
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch {
    return `${dir}/`;
  }
  for (const entry of entries) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      const added = newSource(root, path, files);
      if (added) return added;
    } else if (SOURCE_FILE.test(entry.name) && !(path in files)) {
      return path;
    }
  }
  return null;
}

/** Runs the CommonJS bundle in this process, with its code cache when one matches the build. */
function runBundle({ manifest, source }) {
  const filename = join(DIST, manifest.bundle);
  let cachedData;
  if (manifest.codeCache && !CACHE_OUT) {
    try {
      // `<buildId>\n<V8 cache>`: V8's own check compares source lengths only, the id pins the build.
      const raw = readFileSync(join(DIST, manifest.codeCache));
      const newline = raw.indexOf(10);
      if (newline > 0 && raw.toString('latin1', 0, newline) === manifest.buildId) cachedData = raw.subarray(newline + 1);
    } catch {
      // No cache: compile.
    }
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename,
    cachedData,
    importModuleDynamically: vm.constants?.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (CACHE_OUT) {
    process.once('exit', () => writeFileSync(CACHE_OUT, Buffer.concat([Buffer.from(`${manifest.buildId}\n`, 'latin1'), script.createCachedData()])));
  }
  if (/^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '')) {
    const cache = cachedData === undefined ? 'none' : script.cachedDataRejected ? 'rejected: compiled' : 'accepted';
    process.stderr.write(`switchyard-mcp: running the bundle built ${manifest.builtAt} (code cache ${cache})\n`);
  }
  const module = { exports: {}, id: filename, filename, loaded: false, children: [], paths: [] };
  script.runInThisContext()(module.exports, createRequire(filename), module, filename, dirname(filename));
}

const bundle = process.env.SWITCHYARD_MCP_FROM_SOURCE === '1' ? null : freshBundle();
if (bundle?.source) {
  runBundle(bundle);
} else if (CACHE_OUT) {
  process.stderr.write(`switchyard-mcp: no fresh bundle to warm up${bundle ? ` (${bundle.stale})` : ''}\n`);
  process.exitCode = 1;
} else {
  if (bundle) process.stderr.write(`switchyard-mcp: not using the bundle in apps/mcp-bridge/dist (${bundle.stale}); running the sources (npm run build:bridge rebuilds it)\n`);
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/main.ts');
}
