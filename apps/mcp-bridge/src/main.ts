/**
 * `switchyard-mcp`: the bridge process (issue #8 "Process"). stdio by default (stdout is the
 * protocol, logs go to stderr); `--http PORT` serves Streamable HTTP at `/mcp`. Exits 2 on a
 * configuration error with the reason on stderr.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createApiClient, createApiClientPool } from './api-client.ts';
import { ConfigError, USAGE, parseConfig } from './config.ts';
import { startHttp } from './http.ts';
import { createLogger } from './logger.ts';
import { buildServer, selectTools } from './server.ts';

async function main(): Promise<void> {
  const logger = createLogger();
  let config;
  try {
    config = parseConfig(process.argv.slice(2), process.env);
    if (config === null) {
      process.stderr.write(USAGE);
      return;
    }
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`switchyard-mcp: ${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    throw error;
  }
  let tools;
  try {
    tools = selectTools(config, logger);
  } catch (error) {
    process.stderr.write(`switchyard-mcp: ${(error as Error).message}\n`);
    process.exitCode = 2;
    return;
  }
  if (config.http) {
    const apis = createApiClientPool({ apiUrl: config.apiUrl, timeoutMs: config.requestTimeoutMs });
    if (config.http.auth === 'bearer' && config.apiToken) {
      logger.warn('--api-token / SWITCHYARD_API_TOKEN is not used: with --http-auth bearer every HTTP caller brings its own token');
    }
    const http = await startHttp({ apis, apiToken: config.apiToken, tools, logger }, config.http);
    logger.info(
      { url: http.url, surface: config.surface, tools: tools.length, httpAuth: config.http.auth, allowedHosts: http.allowed.hosts, allowedOrigins: http.allowed.origins },
      'MCP bridge listening (Streamable HTTP)',
    );
    const stop = async () => {
      await http.close();
      await apis.close();
    };
    process.once('SIGINT', () => void stop());
    process.once('SIGTERM', () => void stop());
    return;
  }
  const api = createApiClient({ apiUrl: config.apiUrl, apiToken: config.apiToken, timeoutMs: config.requestTimeoutMs });
  const server = buildServer({ api, tools, logger });
  const transport = new StdioServerTransport();
  transport.onclose = () => void api.close();
  await server.connect(transport);
  logger.info({ surface: config.surface, tools: tools.length, apiUrl: config.apiUrl }, 'MCP bridge ready on stdio');
}

main().catch((error: unknown) => {
  process.stderr.write(`switchyard-mcp: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
