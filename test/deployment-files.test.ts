/**
 * The deployment files as shipped (security issue, item 2): docker-compose.yml publishes nothing
 * beyond loopback, MongoDB runs with authentication (root user from required variables, a keyFile
 * for the replica set, an authenticating health check) and is not published, the API connects with
 * credentials, and the MCP bridge's command starts an authenticated HTTP mode (checked by the
 * bridge's own configuration parser); the Dockerfile runs as a non-root user. Docker itself is
 * not run here.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { isLoopback, parseConfig } from '@switchyard/mcp-bridge';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const compose = parse(readFileSync(`${ROOT}docker-compose.yml`, 'utf8')) as { services: Record<string, any>; volumes?: Record<string, unknown> };
const services = compose.services;

/** Compose interpolation as `docker compose` does it with none of the variables set: `${X:-d}` → d; `${X:?m}` → `<X>` (compose would stop there). */
function interpolate(value: string): string {
  return value.replace(/\$\{(\w+)(?::?([-?])([^}]*))?\}/g, (_match, name: string, kind?: string, rest?: string) => (kind === '-' ? (rest ?? '') : `<${name}>`));
}

/** A service's `environment` as a map (both the map and the list syntax). */
function environmentOf(service: any): Record<string, string> {
  const env = service.environment ?? {};
  if (Array.isArray(env)) return Object.fromEntries(env.map((entry: string) => [entry.split('=')[0], entry.slice(entry.indexOf('=') + 1)]));
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, String(value ?? '')]));
}

/** The host address of a `ports` entry (short or long syntax); '' when it binds every interface. */
function bindAddressOf(entry: unknown): string {
  if (typeof entry === 'object' && entry !== null) return String((entry as { host_ip?: string }).host_ip ?? '');
  const parts = String(entry).split(':');
  return parts.length === 3 ? parts[0]! : '';
}

describe('docker-compose.yml', () => {
  it('publishes every port on 127.0.0.1 only', () => {
    const published = Object.entries(services).flatMap(([name, service]) => ((service.ports ?? []) as unknown[]).map((entry) => [name, entry] as const));
    expect(published.length).toBeGreaterThan(0);
    for (const [name, entry] of published) expect(isLoopback(bindAddressOf(entry)), `${name}: ${JSON.stringify(entry)}`).toBe(true);
    // The API and the bridge stay reachable on this machine.
    expect(services['api'].ports).toContain('127.0.0.1:8080:8080');
    expect(services['mcp-bridge'].ports).toContain('127.0.0.1:8090:8090');
  });

  it('does not publish MongoDB, and runs it with authentication and a replica-set keyFile', () => {
    const mongo = services['mongo'];
    expect(mongo.ports ?? []).toEqual([]);
    expect(mongo.expose ?? []).toEqual([]);
    const command = (mongo.command as string[]).join(' ');
    expect(command).toMatch(/--replSet rs0/);
    expect(command).toMatch(/--keyFile (\S+)/);
    const keyFile = /--keyFile (\S+)/.exec(command)![1]!;
    // The keyFile is generated before mongod starts, owned by mongodb, mode 400, in a volume.
    const entrypoint = (mongo.entrypoint as string[]).join('\n');
    expect(entrypoint).toContain(keyFile);
    expect(entrypoint).toMatch(/chown mongodb:mongodb/);
    expect(entrypoint).toMatch(/chmod 400/);
    expect(entrypoint).toMatch(/exec docker-entrypoint\.sh "\$\$@"/);
    const keyDir = keyFile.slice(0, keyFile.lastIndexOf('/'));
    const volume = (mongo.volumes as string[]).find((entry) => entry.endsWith(`:${keyDir}`));
    expect(volume, `a named volume at ${keyDir}`).toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(volume!.split(':')[0]);
    // The root user is required: compose refuses to start without the variables.
    const env = mongo.environment as Record<string, string>;
    expect(env['MONGO_INITDB_ROOT_USERNAME']).toMatch(/^\$\{\w+:\?.+\}$/);
    expect(env['MONGO_INITDB_ROOT_PASSWORD']).toMatch(/^\$\{\w+:\?.+\}$/);
  });

  it('authenticates the health check that initiates the replica set, without the password on a command line', () => {
    const test = (services['mongo'].healthcheck.test as string[]).join(' ');
    expect(test).toMatch(/\.auth\(process\.env\.MONGO_INITDB_ROOT_USERNAME, process\.env\.MONGO_INITDB_ROOT_PASSWORD\)/);
    expect(test.indexOf('.auth(')).toBeLessThan(test.indexOf('rs.initiate('));
    expect(test).not.toMatch(/ -p /);
  });

  it('gives the API a MongoDB URI with the same credentials and authSource=admin', () => {
    const mongoEnv = services['mongo'].environment as Record<string, string>;
    const user = /^\$\{(\w+)/.exec(mongoEnv['MONGO_INITDB_ROOT_USERNAME']!)![1];
    const password = /^\$\{(\w+)/.exec(mongoEnv['MONGO_INITDB_ROOT_PASSWORD']!)![1];
    const uri = new URL(interpolate(environmentOf(services['api'])['MONGODB_URI']!));
    expect(uri.protocol).toBe('mongodb:');
    expect(decodeURIComponent(uri.username)).toBe(`<${user}>`);
    expect(decodeURIComponent(uri.password)).toBe(`<${password}>`);
    expect(uri.searchParams.get('authSource')).toBe('admin');
    expect(uri.searchParams.get('replicaSet')).toBe('rs0');
    // The API itself requires credentials, as it listens beyond loopback in its container.
    expect(environmentOf(services['api'])['SWITCHYARD_AUTH']).toMatch(/api-key|jwt/);
  });

  it('starts the MCP bridge in an authenticated HTTP mode that holds no API key', () => {
    const bridge = services['mcp-bridge'];
    const command = bridge.command as string[];
    const argv = command.slice(command.findIndex((arg) => arg.endsWith('switchyard-mcp.mjs')) + 1);
    expect(argv).not.toContain('none');
    const env = Object.fromEntries(Object.entries(environmentOf(bridge)).map(([key, value]) => [key, interpolate(value)]));
    // The bridge's own parser accepts it (it refuses `none` beyond loopback), in pass-through mode.
    const config = parseConfig(argv, env)!;
    expect(config.http).not.toBeNull();
    expect(config.http!.auth).toBe('bearer');
    expect(config.apiToken).toBeNull();
    expect(config.http!.allowedHosts).toEqual(['localhost:8090', '127.0.0.1:8090']);
    expect(Object.keys(environmentOf(bridge))).not.toContain('SWITCHYARD_API_TOKEN');
  });
});

describe('docker-compose.yml health checks', () => {
  /** The URL a `node -e "fetch(...)"` health check of `service` requests, with its exit on failure. */
  function probedUrl(service: any): string {
    const test = service.healthcheck?.test as string[] | undefined;
    expect(test?.slice(0, 3)).toEqual(['CMD', 'node', '-e']);
    const script = test![3]!;
    expect(script).toMatch(/process\.exit\(r\.ok \? 0 : 1\)/);
    expect(script).toMatch(/\(\) => process\.exit\(1\)\)$/); // a refused connection is unhealthy too
    return /fetch\('([^']+)'\)/.exec(script)![1]!;
  }

  it('checks MongoDB with a mongosh ping and a writable primary', () => {
    const test = (services['mongo'].healthcheck.test as string[]).join(' ');
    expect(test).toMatch(/^CMD mongosh /);
    expect(test).toContain('db.adminCommand({ ping: 1 })');
    expect(test).toContain('isWritablePrimary');
  });

  it('checks the API on /readyz on the port it listens on, and starts the bridge once the API is ready', () => {
    const api = services['api'];
    const url = new URL(probedUrl(api));
    expect(url.pathname).toBe('/readyz');
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.port).toBe(environmentOf(api)['PORT']);
    expect(api.depends_on).toEqual({ mongo: { condition: 'service_healthy' } });
    expect(services['mcp-bridge'].depends_on).toEqual({ api: { condition: 'service_healthy' } });
  });

  it("checks the bridge on /livez of the HTTP port its command serves", () => {
    const bridge = services['mcp-bridge'];
    const command = bridge.command as string[];
    const url = new URL(probedUrl(bridge));
    expect(url.pathname).toBe('/livez');
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.port).toBe(command[command.indexOf('--http') + 1]);
  });

  it('gives every service a bounded health check', () => {
    for (const name of ['mongo', 'api', 'mcp-bridge']) {
      const check = services[name].healthcheck;
      expect(check, name).toBeDefined();
      for (const field of ['interval', 'timeout', 'start_period']) expect(check[field], `${name} ${field}`).toMatch(/^\d+s$/);
      expect(check.retries, name).toBeGreaterThan(0);
    }
  });
});

describe('Dockerfile', () => {
  const lines = readFileSync(`${ROOT}Dockerfile`, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));

  it('runs as a non-root user that owns /data', () => {
    const cmd = lines.findIndex((line) => /^CMD\b/.test(line));
    const users = lines.slice(0, cmd).filter((line) => /^USER\b/.test(line));
    expect(cmd).toBeGreaterThan(-1);
    expect(users.length).toBeGreaterThan(0);
    const user = users.at(-1)!.split(/\s+/)[1]!.split(':')[0]!;
    expect(['root', '0']).not.toContain(user);
    expect(lines.some((line) => line.startsWith('RUN') && line.includes('/data') && line.includes(`chown ${user}`))).toBe(true);
  });
});
