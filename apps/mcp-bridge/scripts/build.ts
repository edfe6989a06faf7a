/**
 * Bundles the MCP bridge for a short cold start (issue #8: tools/list answered within 300 ms of
 * the spawn). `npm run build:bridge` writes, in apps/mcp-bridge/dist/:
 *
 * - `switchyard-mcp.cjs` (+ `.map`): the bridge and its dependencies in one CommonJS file (esbuild).
 *   CommonJS because Node 20 can code-cache a classic script (vm.Script `cachedData`) but not an
 *   ES module.
 * - `switchyard-mcp.v8cache`: V8's code cache of that file, taken at the end of one warm-up run
 *   (initialize + tools/list over stdio). It holds the bytecode of every function that run
 *   compiled, so a later start parses and compiles almost nothing. The warm-up is also the smoke
 *   test of the bundle: the build fails when the bundle does not answer tools/list.
 * - `manifest.json`: build id, and size and mtime of every file the bundle was built from (the
 *   bridge's sources, any other local module it imports, node_modules/.package-lock.json).
 *
 * bin/switchyard-mcp.mjs runs the bundle only while every one of those files is unchanged and
 * src/ has no new source file; otherwise it runs the sources through tsx, as without a build.
 *
 * The code cache is tied to the Node/V8 version and flags of the warm-up run: under another
 * version V8 rejects it and the bundle is compiled as usual (correct, only slower).
 *
 *   npx tsx apps/mcp-bridge/scripts/build.ts [--no-code-cache]
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { listToolsOverStdio } from './stdio-handshake.ts';

/** apps/mcp-bridge */
export const BRIDGE_DIR = fileURLToPath(new URL('..', import.meta.url));
/** The repository root (paths in the manifest are relative to it). */
export const REPO_ROOT = resolve(BRIDGE_DIR, '..', '..');
export const DIST_DIR = join(BRIDGE_DIR, 'dist');
export const BUNDLE = join(DIST_DIR, 'switchyard-mcp.cjs');
export const CODE_CACHE = join(DIST_DIR, 'switchyard-mcp.v8cache');
export const MANIFEST = join(DIST_DIR, 'manifest.json');
/** The `switchyard-mcp` command (it picks the bundle or the sources). */
export const BIN = join(BRIDGE_DIR, 'bin', 'switchyard-mcp.mjs');

/** Directories whose every source file must be unchanged for the bundle to run (repository-relative). */
const WATCHED_DIRS = ['apps/mcp-bridge/src'];
/** Files that change when dependencies are installed or updated. */
const DEPENDENCY_STAMPS = ['node_modules/.package-lock.json'];
/** What counts as a source file under a watched directory (the bin uses the same test). */
const SOURCE_FILE = /\.(?:[cm]?ts|[cm]?js|json)$/;

/** The manifest bin/switchyard-mcp.mjs reads. */
export interface Manifest {
  format: 1;
  buildId: string;
  builtAt: string;
  /** The repository root, relative to dist/. */
  root: string;
  bundle: string;
  codeCache: string | null;
  node: string;
  watch: string[];
  /** Repository-relative path -> [mtimeMs, size] when the build read it. */
  files: Record<string, [number, number]>;
}

export interface BuildOptions {
  /** Take the V8 code cache with a warm-up run (default true). */
  codeCache?: boolean;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

export interface BuildResult {
  bundle: string;
  bundleBytes: number;
  codeCacheBytes: number | null;
  /** Tools the warm-up run listed (null without a warm-up). */
  tools: number | null;
  /** Source files the bundle depends on (manifest entries). */
  inputs: number;
  ms: number;
  warnings: string[];
}

/** Builds the bundle, its manifest and (by default) its code cache. Throws when the bundle does not work. */
export async function buildBridge(options: BuildOptions = {}): Promise<BuildResult> {
  const log = options.log ?? (() => {});
  const started = performance.now();
  const startedAt = Date.now();
  const buildId = randomBytes(8).toString('hex');
  const warnings: string[] = [];

  // Sizes and mtimes before esbuild reads anything: an edit made during the build makes the
  // manifest disagree with the file, so the bin treats the bundle as stale.
  const before = await snapshot(await watchedFiles());
  const listings = await toolListings();
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: [join(BRIDGE_DIR, 'src', 'main.ts')],
    outfile: BUNDLE,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Not minified: it does not shorten the start measurably (the code cache skips parsing), and
    // stack traces keep their names.
    sourcemap: 'linked',
    banner: { js: bannerOf(buildId) },
    metafile: true,
    write: false,
    logLevel: 'silent',
    // A string (JSON.parse at first use): an object here would become a module that esbuild inits everywhere.
    define: { SWITCHYARD_TOOL_LISTINGS: JSON.stringify(JSON.stringify(listings)) },
  });
  for (const message of result.warnings) warnings.push(`esbuild: ${message.text}${message.location ? ` (${message.location.file}:${message.location.line})` : ''}`);

  // Local modules outside the watched directories (e.g. a workspace package) are recorded too.
  const local = Object.keys(result.metafile.inputs).filter((path) => !path.includes('node_modules/') && !/^[\w-]+:/.test(path) && !path.startsWith('<'));
  const extra = local.map((path) => path.split(sep).join('/')).filter((path) => !(path in before));
  const extraFiles = await snapshot(extra);
  const files = { ...before, ...extraFiles };
  const after = await snapshot(Object.keys(before));
  const changed = [
    ...Object.keys(before).filter((path) => String(after[path]) !== String(before[path])),
    // Found only now, so judged by the clock: written after the build began.
    ...extra.filter((path) => extraFiles[path]![0] > startedAt),
  ];
  if (changed.length > 0) throw new Error(`sources changed during the build (${changed.join(', ')}); run it again`);

  await mkdir(DIST_DIR, { recursive: true });
  // The manifest goes first (removed), last (written): a bridge starting meanwhile runs the sources.
  await rm(MANIFEST, { force: true });
  let bundleBytes = 0;
  for (const file of result.outputFiles) {
    await writeAtomically(file.path, file.contents);
    if (file.path === BUNDLE) bundleBytes = file.contents.length;
  }
  const manifest: Manifest = {
    format: 1,
    buildId,
    builtAt: new Date().toISOString(),
    root: relative(DIST_DIR, REPO_ROOT).split(sep).join('/') || '.',
    bundle: relative(DIST_DIR, BUNDLE),
    codeCache: options.codeCache === false ? null : relative(DIST_DIR, CODE_CACHE),
    node: process.version,
    watch: WATCHED_DIRS,
    files,
  };
  await writeAtomically(MANIFEST, JSON.stringify(manifest, null, 1) + '\n');
  log(`bundle: ${relative(REPO_ROOT, BUNDLE)} (${(bundleBytes / 1024).toFixed(0)} KiB, ${Object.keys(files).length} source files watched)`);

  let codeCacheBytes: number | null = null;
  let tools: number | null = null;
  if (options.codeCache !== false) {
    const temporary = `${CODE_CACHE}.tmp-${process.pid}`;
    try {
      tools = await warmUp(temporary);
      await rename(temporary, CODE_CACHE);
      codeCacheBytes = (await stat(CODE_CACHE)).size;
    } catch (error) {
      // A bundle that cannot answer tools/list must not run: without the manifest the bin uses the sources.
      await rm(MANIFEST, { force: true });
      await rm(temporary, { force: true });
      throw new Error(`the bundle failed its warm-up run, so it was disabled: ${(error as Error).message}`);
    }
    log(`code cache: ${relative(REPO_ROOT, CODE_CACHE)} (${(codeCacheBytes / 1024).toFixed(0)} KiB, warm-up listed ${tools} tools, ${process.version})`);
  } else {
    await rm(CODE_CACHE, { force: true });
  }
  return { bundle: BUNDLE, bundleBytes, codeCacheBytes, tools, inputs: Object.keys(files).length, ms: performance.now() - started, warnings };
}

/** The bundle's first line; the bin checks it against the manifest's build id. */
export function bannerOf(buildId: string): string {
  return `/* switchyard-mcp build ${buildId} */`;
}

/**
 * The tools/list entry of every tool of both surfaces, by name, as the sources list them: the
 * bundle gets them as `SWITCHYARD_TOOL_LISTINGS`, a JSON string (esbuild `define`), so that
 * server.ts can answer the first tools/list without converting every tool's zod schemas to JSON
 * Schema at start-up (where server.ts does not use it, it is not in the bundle).
 * A name listed differently by the two surfaces is left out (computed at run time).
 */
async function toolListings(): Promise<Record<string, unknown>> {
  const [{ buildServer, createApiClient, SEMANTIC_TOOLS, ORCHESTRATOR_TOOLS }, { InMemoryTransport }] = await Promise.all([
    import('../src/index.ts'),
    import('@modelcontextprotocol/sdk/inMemory.js'),
  ]);
  const api = createApiClient({ apiUrl: 'http://127.0.0.1:9', apiToken: null, timeoutMs: 1_000 });
  const seen = new Map<string, string>();
  const clashes = new Set<string>();
  const listings: Record<string, unknown> = {};
  try {
    for (const tools of [SEMANTIC_TOOLS, ORCHESTRATOR_TOOLS]) {
      const server = buildServer({ api, tools });
      const [client, serverSide] = InMemoryTransport.createLinkedPair();
      const answer = new Promise<Array<{ name: string }>>((resolveAnswer, reject) => {
        client.onmessage = (message) => {
          if (!('id' in message) || message.id !== 2) return;
          if ('result' in message) resolveAnswer((message.result as { tools: Array<{ name: string }> }).tools);
          else reject(new Error(`tools/list failed: ${JSON.stringify(message)}`));
        };
      });
      await server.connect(serverSide);
      await client.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'switchyard-build', version: '0' } } });
      await client.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await client.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      for (const tool of await answer) {
        const json = JSON.stringify(tool);
        if (seen.has(tool.name) && seen.get(tool.name) !== json) clashes.add(tool.name);
        seen.set(tool.name, json);
        listings[tool.name] = tool;
      }
      await server.close();
    }
  } finally {
    await api.close();
  }
  for (const name of clashes) delete listings[name];
  return listings;
}

/** Every source file under the watched directories, plus the dependency stamps that exist. */
async function watchedFiles(): Promise<string[]> {
  const found: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(join(REPO_ROOT, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (SOURCE_FILE.test(entry.name)) found.push(path);
    }
  }
  for (const dir of WATCHED_DIRS) await walk(dir);
  return [...found, ...DEPENDENCY_STAMPS.filter((path) => existsSync(join(REPO_ROOT, path)))];
}

/** [mtimeMs, size] of each repository-relative path. */
async function snapshot(paths: readonly string[]): Promise<Record<string, [number, number]>> {
  const entries = await Promise.all(
    paths.map(async (path): Promise<[string, [number, number]]> => {
      const info = await stat(join(REPO_ROOT, path));
      return [path, [info.mtimeMs, info.size]];
    }),
  );
  return Object.fromEntries(entries);
}

/** Writes through a temporary file and a rename, so no reader ever sees half a file. */
async function writeAtomically(path: string, contents: string | Uint8Array): Promise<void> {
  const temporary = `${path}.tmp-${process.pid}`;
  await writeFile(temporary, contents);
  await rename(temporary, path);
}

/**
 * Runs the command once (which runs the new bundle) with `SWITCHYARD_MCP_CODE_CACHE_OUT`: it answers
 * initialize and tools/list, exits when stdin closes, and at exit writes the code cache there.
 * Returns the number of tools listed.
 */
async function warmUp(cacheOut: string): Promise<number> {
  const env: Record<string, string | undefined> = { ...process.env, SWITCHYARD_MCP_CODE_CACHE_OUT: cacheOut, SWITCHYARD_API_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'info' };
  delete env['SWITCHYARD_MCP_FROM_SOURCE'];
  // Same argv shape as a normal start (`node bin`): V8 rejects a cache taken under other flags.
  const { tools, code, signal, stderr } = await listToolsOverStdio([BIN], env, 'switchyard-build');
  if (code !== 0) throw new Error(`exited with ${signal ?? code} after tools/list; stderr: ${stderr.slice(-2000)}`);
  if (!existsSync(cacheOut)) throw new Error(`no code cache written; stderr: ${stderr.slice(-2000)}`);
  return tools;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'no-code-cache': { type: 'boolean' } } });
  const result = await buildBridge({ codeCache: !values['no-code-cache'], log: (line) => console.log(`build:bridge: ${line}`) });
  for (const warning of result.warnings) console.warn(`build:bridge: warning: ${warning}`);
  console.log(`build:bridge: done in ${result.ms.toFixed(0)} ms; bin/switchyard-mcp.mjs runs the bundle until a source file changes`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(`build:bridge: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  });
}
