/**
 * The MCP server of the bridge (STYLE.md §3: a factory that builds the server; the transport is
 * picked at the edge). Built on the SDK's low-level `Server`, so that the bridge owns input
 * validation: invalid arguments come back as an `INVALID_INPUT` envelope naming the field (the MCP
 * spec asks tools to report input errors as results the model can correct), not as a protocol
 * error. Every result is an envelope (envelope.ts).
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';
import type { ApiClient } from './api-client.ts';
import { ConfigError, type BridgeConfig } from './config.ts';
import { describeIssues, envelopeSchema, errorOf, failure, success, type ToolCallResult } from './envelope.ts';
import type { Logger } from './logger.ts';
import { annotationsOf, type AnyTool, type ToolContext } from './tool.ts';
import { toolsOf } from './tools/index.ts';

/** The bridge's version, as the server announces it. */
export const BRIDGE_VERSION = '0.1.0';

/**
 * The tools this configuration exposes: the surface's tools, minus write tools under `readOnly`,
 * restricted to `allowedTools` when given. Throws ConfigError naming an unknown allowed tool.
 */
export function selectTools(config: Pick<BridgeConfig, 'surface' | 'readOnly' | 'allowedTools'>, logger?: Logger): AnyTool[] {
  const all = toolsOf(config.surface);
  if (config.allowedTools !== null) {
    const known = new Set(all.map((tool) => tool.name));
    const unknown = config.allowedTools.filter((name) => !known.has(name));
    if (unknown.length > 0) {
      throw new ConfigError(`--allowed-tools: unknown tool(s) ${unknown.join(', ')} for the ${config.surface} surface (its tools: ${[...known].join(', ')})`);
    }
  }
  return all.filter((tool) => {
    if (config.readOnly && tool.kind !== 'read') {
      logger?.debug({ tool: tool.name }, 'tool not exposed: --read-only');
      return false;
    }
    if (config.allowedTools !== null && !config.allowedTools.includes(tool.name)) {
      logger?.debug({ tool: tool.name }, 'tool not exposed: not in --allowed-tools');
      return false;
    }
    return true;
  });
}

/** JSON Schema (draft-07, as MCP clients validate with) of a zod schema; `io` picks input or output types. */
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: 'draft-7', io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete json['$schema'];
  return json;
}

/** Listings computed at build time (scripts/build.ts defines it in the bundle; absent when run from the sources). */
declare const SWITCHYARD_TOOL_LISTINGS: string | undefined;
const PREBUILT = new Map<string, McpTool>(typeof SWITCHYARD_TOOL_LISTINGS === 'string' ? Object.entries(JSON.parse(SWITCHYARD_TOOL_LISTINGS) as Record<string, McpTool>) : []);

/** Per tool, computed once per process: its strict input schema and its listing (HTTP builds a server per request). */
const strictInputs = new WeakMap<AnyTool, AnyTool['input']>();
const listings = new WeakMap<AnyTool, McpTool>();

/** The tool's input schema, rejecting unknown keys. */
function strictInput(tool: AnyTool): AnyTool['input'] {
  let schema = strictInputs.get(tool);
  if (!schema) strictInputs.set(tool, (schema = tool.input.strict()));
  return schema;
}

/** The tool's listing: the build-time one when it matches the tool, else computed (once). */
function listingOf(tool: AnyTool): McpTool {
  let listing = listings.get(tool);
  if (!listing) {
    const prebuilt = PREBUILT.get(tool.name);
    listing = prebuilt && prebuilt.title === tool.title && prebuilt.description === tool.description ? prebuilt : describeTool(tool);
    listings.set(tool, listing);
  }
  return listing;
}

/** The MCP listing of a tool. */
export function describeTool(tool: AnyTool): McpTool {
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(strictInput(tool), 'input') as McpTool['inputSchema'],
    // As the input side sees it: objects accept fields beyond those declared (the API may add some).
    outputSchema: jsonSchemaOf(envelopeSchema(tool.output), 'input') as McpTool['outputSchema'],
    annotations: annotationsOf(tool.kind, tool.title),
  };
}

/** Runs one tool call: validate, run, wrap. Never throws. */
export async function callTool(tool: AnyTool, args: unknown, context: ToolContext, logger?: Logger): Promise<ToolCallResult> {
  const parsed = strictInput(tool).safeParse(args ?? {});
  if (!parsed.success) {
    const { message, fields } = describeIssues(parsed.error.issues);
    return failure({ code: 'INVALID_INPUT', message, details: { fields } });
  }
  const started = Date.now();
  try {
    const data = await tool.run(parsed.data, context);
    logger?.debug({ tool: tool.name, ms: Date.now() - started }, 'tool call');
    return success(data);
  } catch (error) {
    const envelope = errorOf(error);
    logger?.info({ tool: tool.name, code: envelope.code, ms: Date.now() - started }, 'tool call failed');
    return failure(envelope);
  }
}

/** Dependencies of {@link buildServer}. */
export interface ServerDeps {
  api: ApiClient;
  tools: readonly AnyTool[];
  logger?: Logger;
  /** Default: real timers. */
  sleep?: ToolContext['sleep'];
  now?: () => number;
}

/** Builds an MCP server exposing `tools` over the REST client. Connect it to a transport. */
export function buildServer(deps: ServerDeps): Server {
  const server = new Server({ name: 'switchyard', version: BRIDGE_VERSION }, { capabilities: { tools: {} } });
  const byName = new Map(deps.tools.map((tool) => [tool.name, tool]));
  let listing: McpTool[] | null = null;
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    listing ??= deps.tools.map(listingOf);
    return { tools: listing };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (!tool) {
      return failure({ code: 'INVALID_INPUT', message: `Unknown tool '${request.params.name}' (tools: ${[...byName.keys()].join(', ')})`, details: { fields: ['name'] } });
    }
    const context: ToolContext = { api: deps.api, signal: extra.signal, meta: request.params._meta ?? {}, sleep: deps.sleep ?? sleep, now: deps.now ?? Date.now };
    return callTool(tool, request.params.arguments, context, deps.logger);
  });
  return server;
}

/** Real, abortable sleep. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
