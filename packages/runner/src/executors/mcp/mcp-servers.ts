/**
 * The `mcpServers` section of the registry file, which the `mcp` kind owns: how to reach each MCP
 * server its entries name (a stdio command or a Streamable HTTP URL), checked and resolved into a
 * {@link McpServerTarget} with variables expanded, paths made absolute and secrets collected.
 */
import path from 'node:path';
import Type, { type Static } from 'typebox';
import { HeadersSchema, urlSchema, type ConnectionSection, type EntryScope } from '../kind.ts';
import { hasDefinedValue, isDefined } from '../shared/defined.ts';

/**
 * An MCP server spawned as a child process and spoken to over stdin/stdout. All strings support
 * `${env:NAME}` / `${VAR}` / `${VAR:-default}` expansion, with `${REGISTRY_DIR}` and `${DATA_DIR}` built in.
 */
export const StdioServerEntry = Type.Object(
  {
    command: Type.String({ minLength: 1, description: 'Executable; `node` means the Node.js binary running this service' }),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Added to (and overriding) the environment inherited from this process' })),
    cwd: Type.Optional(Type.String({ description: "Working directory; relative to the registry file's directory, which is also the default" })),
  },
  { additionalProperties: false },
);
export type StdioServerConfig = Static<typeof StdioServerEntry>;

/** An MCP server reached over Streamable HTTP. Strings support `${VAR}` expansion. */
export const HttpServerEntry = Type.Object(
  { url: urlSchema('e.g. http://127.0.0.1:9000/mcp'), headers: Type.Optional(HeadersSchema) },
  { additionalProperties: false },
);
export type HttpServerConfig = Static<typeof HttpServerEntry>;

/** One entry of `mcpServers`: stdio when it has `command`, Streamable HTTP when it has `url`. */
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** What every resolved server has, whatever its transport. */
interface ServerTargetBase {
  /**
   * Values that must never appear in what is reported about this server (errors, logs, tool
   * output; see `redact.ts`): every value substituted for a `${VAR}` or `${env:NAME}` reference except the built-in
   * paths `${REGISTRY_DIR}` and `${DATA_DIR}` (so also the `${VAR}` parts of `env` entries, but
   * not their literal text, nor the inherited environment), the values of `headers` (and the
   * credentials after a scheme such as `Bearer`), and the
   * URL's user name, password and query parameter values. Unordered, without duplicates.
   */
  secrets: string[];
}

/** A stdio server after expansion: absolute `cwd`, full child environment. */
export interface StdioServerTarget extends ServerTargetBase {
  transport: 'stdio';
  command: string;
  args: string[];
  /** The inherited environment merged with the entry's `env`: exactly what the child gets. */
  env: Record<string, string>;
  cwd: string;
}

/** A Streamable HTTP server after expansion. */
export interface HttpServerTarget extends ServerTargetBase {
  transport: 'http';
  url: URL;
  headers: Record<string, string>;
}

/** How to reach one MCP server. */
export type McpServerTarget = StdioServerTarget | HttpServerTarget;

/** The schema of one `mcpServers` entry (for the file's type; {@link mcpServers} tells the two apart first). */
const McpServerEntry = Type.Union([StdioServerEntry, HttpServerEntry]);

/**
 * The `mcpServers` section (see `ConnectionSection`): an entry with `command` is a stdio server,
 * one with `url` a Streamable HTTP server; one with both or neither is a problem at the entry.
 */
export const mcpServers = {
  name: 'mcpServers',
  schema: McpServerEntry,
  resolve(entry: Readonly<Record<string, unknown>>, scope: EntryScope): McpServerTarget | undefined {
    const isStdio = 'command' in entry;
    const isHttp = 'url' in entry;
    if (isStdio === isHttp) {
      scope.problem(undefined, isStdio
        ? 'set either "command" (stdio server) or "url" (Streamable HTTP server), not both'
        : 'must set "command" (stdio server) or "url" (Streamable HTTP server)');
      return undefined;
    }
    if (isStdio) return scope.check(StdioServerEntry, entry) ? stdioServer(entry as StdioServerConfig, scope) : undefined;
    return scope.check(HttpServerEntry, entry) ? httpServer(entry as HttpServerConfig, scope) : undefined;
  },
} as const satisfies ConnectionSection<McpServerTarget, 'mcpServers'>;

/** A stdio server entry resolved: `node` is this process's binary, `cwd` absolute (default the registry's directory), `env` the inherited environment plus the entry's. */
function stdioServer(entry: StdioServerConfig, scope: EntryScope): StdioServerTarget | undefined {
  const secrets = new Set<string>();
  const command = scope.expand(entry.command, 'command', secrets);
  const args = (entry.args ?? []).map((arg, index) => scope.expand(arg, ['args', index], secrets));
  const env = Object.entries(entry.env ?? {}).map(([name, value]): [string, string | undefined] => [name, scope.expand(value, ['env', name], secrets)]);
  const cwd = entry.cwd === undefined ? scope.baseDir : scope.expand(entry.cwd, 'cwd', secrets);
  if (command === undefined || !args.every(isDefined) || !env.every(hasDefinedValue) || cwd === undefined) return undefined;
  return {
    transport: 'stdio',
    command: command === 'node' ? process.execPath : command,
    args,
    env: { ...scope.env, ...Object.fromEntries(env) },
    cwd: path.resolve(scope.baseDir, cwd),
    secrets: [...secrets],
  };
}

/** A Streamable HTTP server entry resolved: URL and header values expanded. */
function httpServer(entry: HttpServerConfig, scope: EntryScope): HttpServerTarget | undefined {
  const secrets = new Set<string>();
  const url = scope.url(entry.url, 'url', secrets);
  const headers = scope.headers(entry.headers, 'headers', secrets);
  if (url === undefined || headers === undefined) return undefined;
  return { transport: 'http', url, headers, secrets: [...secrets] };
}
