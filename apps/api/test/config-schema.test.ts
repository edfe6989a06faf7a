/**
 * The configuration schema (config-schema.ts) as loadConfig applies it: every variable is checked
 * and named, all problems come in one error, and spelling out the defaults changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, EXAMPLE_EXECUTORS_FILE, loadConfig } from '../src/config.ts';
import { CONFIG_GROUPS, configEntries, type ConfigEntry } from '../src/config-schema.ts';

/** Variables whose every value is acceptable (free text or paths): they cannot be set to a bad value. */
const FREE_FORM = [
  'DATA_DIR',
  'SWITCHYARD_EXECUTORS',
  'SWITCHYARD_JWT_ISSUER',
  'SWITCHYARD_JWT_AUDIENCE',
  'SWITCHYARD_API_KEYS_FILE',
  'SWITCHYARD_DOWNSTREAM_TOKEN_AUDIENCE',
  'SWITCHYARD_DOWNSTREAM_TOKEN_ISSUER',
  'OTEL_SERVICE_NAME',
];

/** A bad value of each format. */
const BAD_BY_FORMAT: Record<string, string> = {
  'listen-host': 'not a host!',
  'log-level': 'loud',
  'mongodb-uri': 'postgres://user:hunter2@db/x',
  'auth-modes': 'oauth',
  'claim-path': 'realm_access..roles',
  'workflow-access': '{"owners": []}',
  'http-url': 'ftp://idp/jwks',
  'hs256-key': 'short-secret',
  'cors-origins': 'https://canvas.example.com/',
  'host-names': 'https://api.example.com',
  'bearer-token': 'too short',
};

function badValue(entry: ConfigEntry, variant: 'malformed' | 'out of range'): string | undefined {
  if (entry.type === 'integer') return variant === 'malformed' ? 'twelve' : String(entry.maximum! + 1);
  if (entry.type === 'boolean') return 'maybe';
  return entry.format === undefined ? undefined : BAD_BY_FORMAT[entry.format];
}

function problemsOf(env: NodeJS.ProcessEnv): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toBe(`Invalid configuration: ${(error as ConfigError).problems.join('; ')}`);
    return (error as ConfigError).problems;
  }
  throw new Error('loadConfig accepted a bad configuration');
}

describe('configuration schema', () => {
  it('declares every variable with a documentation group and a description', () => {
    for (const [name, entry] of configEntries()) {
      expect(CONFIG_GROUPS, name).toContain(entry.group);
      expect(entry.description, name).toBeTruthy();
    }
    expect(configEntries().map(([name]) => name)).toEqual(expect.arrayContaining(['PORT', 'SWITCHYARD_AUTH', 'SWITCHYARD_CORS_ORIGINS', 'SWITCHYARD_DOWNSTREAM_TOKEN_TTL_SECONDS']));
  });

  it.each(['malformed', 'out of range'] as const)('names every variable set to a bad value (%s) in one error, once each', (variant) => {
    const env: NodeJS.ProcessEnv = {};
    const free: string[] = [];
    for (const [name, entry] of configEntries()) {
      const bad = badValue(entry, variant);
      if (bad === undefined) free.push(name);
      else env[name] = bad;
    }
    expect(free.sort()).toEqual([...FREE_FORM].sort());
    const problems = problemsOf(env);
    const named = problems.map((problem) => /^[A-Z_]+/.exec(problem)?.[0]);
    expect(named.sort()).toEqual(Object.keys(env).sort());
    expect(problems).toContain("PORT must be an integer between 0 and 65535, got '" + env.PORT + "'");
    expect(problems).toContain("SWITCHYARD_AUTH must be none, jwt, api-key or jwt,api-key, got 'oauth'");
    expect(problems).toContain("SWITCHYARD_TRUST_PROXY_IDENTITY must be true or false, got 'maybe'");
  });

  it('lists broken cross-variable rules in the same error as malformed variables', () => {
    expect(problemsOf({ PORT: '-1', SWITCHYARD_AUTH: 'jwt,api-key' })).toEqual([
      "PORT must be an integer between 0 and 65535, got '-1'",
      'SWITCHYARD_AUTH=jwt needs exactly one of SWITCHYARD_JWT_SECRET (HS256) and SWITCHYARD_JWKS_URL',
      'SWITCHYARD_AUTH=api-key needs SWITCHYARD_API_KEYS_FILE',
    ]);
  });

  it('does not quote secrets or connection strings in its errors', () => {
    const message = problemsOf({ SWITCHYARD_JWT_SECRET: 'short-secret', SWITCHYARD_DOWNSTREAM_TOKEN_SECRET: 'other-secret', MONGODB_URI: 'mysql://u:hunter2@db' }).join('; ');
    expect(message).toMatch(/SWITCHYARD_JWT_SECRET must be at least 32 bytes/);
    expect(message).toMatch(/SWITCHYARD_DOWNSTREAM_TOKEN_SECRET must be at least 32 bytes/);
    expect(message).toMatch(/MONGODB_URI must be a mongodb:\/\/ or mongodb\+srv:\/\/ connection string/);
    expect(message).not.toMatch(/short-secret|other-secret|hunter2/);
  });

  it('gives the same configuration with every variable spelled out at its default (empty for those unset by default) as with none set', () => {
    const env: NodeJS.ProcessEnv = { SWITCHYARD_EXECUTORS: EXAMPLE_EXECUTORS_FILE };
    for (const [name, entry] of configEntries()) {
      if (name in env) continue;
      env[name] = entry.default === undefined ? '' : String(entry.default);
    }
    expect(Object.keys(env).length).toBe(configEntries().length);
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });

  it('accepts booleans as true/false/1/0 in any case, integers as decimal numbers only', () => {
    for (const [raw, value] of [['TRUE', true], [' 1 ', true], ['False', false], ['0', false]] as const) {
      expect(loadConfig({ SWITCHYARD_TRUST_PROXY_IDENTITY: raw }).auth.trustProxyIdentity, raw).toBe(value);
    }
    expect(loadConfig({ PORT: '9090', SWITCHYARD_RUN_RETENTION_DAYS: '30' })).toMatchObject({ port: 9090, runRetentionDays: 30, runsKeptPerWorkflow: null });
    for (const bad of ['1.5', 'true', '8080x', ' ', '0x50', '1e3', '0b1']) expect(() => loadConfig({ PORT: bad }), bad).toThrow(/PORT must be an integer between 0 and 65535/);
  });

  it('turns tracing on with an OTLP endpoint (either standard variable), unless OTEL_SDK_DISABLED is true', () => {
    expect(loadConfig({}).tracing).toBeNull();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing).toEqual({ serviceName: 'switchyard-api' });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://c.example/v1/traces', OTEL_SERVICE_NAME: 'orders' }).tracing).toEqual({ serviceName: 'orders' });
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT/);
  });

  it('reads SWITCHYARD_AUTH in any case with spaces, each mode once, and refuses empty entries', () => {
    const keys = { SWITCHYARD_JWT_SECRET: 's'.repeat(32), SWITCHYARD_API_KEYS_FILE: 'keys.json' };
    expect(loadConfig({ ...keys, SWITCHYARD_AUTH: ' API-Key , jwt,api-key' }).auth.modes).toEqual(['api-key', 'jwt']);
    for (const none of ['none', ' None ', '  ']) expect(loadConfig({ SWITCHYARD_AUTH: none }).auth.modes, none).toEqual([]);
    for (const bad of ['jwt,', ',', 'none,jwt', 'oauth']) expect(() => loadConfig({ ...keys, SWITCHYARD_AUTH: bad }), bad).toThrow(/SWITCHYARD_AUTH must be none, jwt, api-key or jwt,api-key/);
  });
});
