/**
 * Principals (issue #18 item 1): a caller is `user:<sub>` plus `group:<name>` for each of its
 * groups, and every credential kind brings its groups — a JWT claim (`SWITCHYARD_JWT_GROUPS_CLAIM`),
 * an API key's `"subject"` / `"groups"` (and `npm run api-key --subject/--group`), the trusted
 * proxy's `X-Switchyard-Groups` — under one bound (auth/groups.ts) that refuses, never trims.
 * No endpoint shows principals yet, so these go through `Authenticator.authenticate` and
 * `principalsOf`; the 401 over real HTTP is in test/auth.e2e.test.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError } from '@switchyard/domain';
import { ApiKeyVerifier, newApiKey } from '../src/auth/api-keys.ts';
import { Authenticator, type AuthConfig } from '../src/auth/authenticator.ts';
import { isAdmin, principalsOf, type CallerIdentity } from '../src/auth/identity.ts';
import { ConfigError, loadConfig } from '../src/config.ts';

const SECRET = 'a-principals-secret-of-32-bytes-or-more';
const TOO_MANY = Array.from({ length: 10_000 }, (_, i) => `g${i}`);
const HUGE_NAME = 'x'.repeat(10 * 1024);

/** An HS256 token for `sub` with `claims`, valid for five minutes. */
function token(sub: string, claims: Record<string, unknown> = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt().setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));
}

async function jwtAuthenticator(groupsClaim?: string): Promise<Authenticator> {
  return Authenticator.create({ modes: ['jwt'], jwt: { secret: SECRET, ...(groupsClaim === undefined ? {} : { groupsClaim }) }, trustProxyIdentity: false });
}

/** The caller of a request with `headers`, or the 401 it gets. */
async function callerOf(authenticator: Authenticator, headers: Record<string, string>): Promise<CallerIdentity | AuthenticationError> {
  try {
    return await authenticator.authenticate(headers);
  } catch (error) {
    if (error instanceof AuthenticationError) return error;
    throw error;
  }
}

describe('JWT groups', () => {
  let jwt: Authenticator;
  beforeAll(async () => {
    jwt = await jwtAuthenticator();
  });

  it('makes the caller user:<sub> plus group:<name> for each name of the groups claim', async () => {
    const caller = await jwt.authenticate({ authorization: `Bearer ${await token('u-7', { groups: ['ops', 'finance-approvers', 'ops'] })}` });
    expect(caller).toMatchObject({ userId: 'u-7', groups: ['ops', 'finance-approvers'], method: 'jwt' });
    expect(principalsOf(caller)).toEqual(['user:u-7', 'group:ops', 'group:finance-approvers']);
    expect(isAdmin(caller)).toBe(false);
  });

  it('accepts the claim as one string of names separated by commas or spaces, and no claim as no group', async () => {
    const listed = await jwt.authenticate({ authorization: `Bearer ${await token('u-7', { groups: 'ops, qa  /realm/admins' })}` });
    expect(listed.groups).toEqual(['ops', 'qa', '/realm/admins']);
    const none = await jwt.authenticate({ authorization: `Bearer ${await token('u-8')}` });
    expect(principalsOf(none)).toEqual(['user:u-8']);
  });

  it('reads another claim when configured: a nested path (Keycloak realm roles), or an exact name with dots (Auth0 namespaced claims)', async () => {
    const keycloak = await jwtAuthenticator('realm_access.roles');
    const nested = await keycloak.authenticate({ authorization: `Bearer ${await token('u-1', { groups: ['ignored'], realm_access: { roles: ['approvers'] } })}` });
    expect(nested.groups).toEqual(['approvers']);
    const auth0 = await jwtAuthenticator('https://switchyard.example.com/groups');
    const namespaced = await auth0.authenticate({ authorization: `Bearer ${await token('u-2', { 'https://switchyard.example.com/groups': ['ops'] })}` });
    expect(namespaced.groups).toEqual(['ops']);
    // A path that leads nowhere (or through a non-object) is no claim: no groups.
    const missing = await keycloak.authenticate({ authorization: `Bearer ${await token('u-3', { realm_access: 'roles' })}` });
    expect(missing.groups).toEqual([]);
  });

  it('refuses (401) a token with 10 000 groups or a 10 KB group name, without echoing it', async () => {
    const many = await callerOf(jwt, { authorization: `Bearer ${await token('u-7', { groups: TOO_MANY })}` });
    expect(many).toBeInstanceOf(AuthenticationError);
    expect((many as Error).message).toBe("The token's 'groups' claim lists more than 100 groups (the most accepted)");
    const huge = await callerOf(jwt, { authorization: `Bearer ${await token('u-7', { groups: ['ops', HUGE_NAME] })}` });
    expect((huge as Error).message).toBe(
      "The token's 'groups' claim: entry 2 (10240 characters) is not a group name (1–200 characters without whitespace or commas)",
    );
    const hugeString = await callerOf(jwt, { authorization: `Bearer ${await token('u-7', { groups: TOO_MANY.join(',') })}` });
    expect((hugeString as Error).message).toMatch(/more than 100 groups/);
  });

  it('refuses (401) a groups claim of the wrong shape, naming the claim', async () => {
    for (const [groups, message] of [
      [42, "The token's 'groups' claim must be an array of group names or a string of them separated by commas, got a number"],
      [{ ops: true }, "The token's 'groups' claim must be an array of group names or a string of them separated by commas, got an object"],
      [['ops', 7], "The token's 'groups' claim: entry 2 is a number, not a group name"],
      [['ops', ''], "The token's 'groups' claim: entry 2 (0 characters) is not a group name (1–200 characters without whitespace or commas)"],
      [['two words'], "The token's 'groups' claim: entry 1 (9 characters) is not a group name (1–200 characters without whitespace or commas)"],
    ] as const) {
      const refused = await callerOf(jwt, { authorization: `Bearer ${await token('u-7', { groups })}` });
      expect(refused, JSON.stringify(groups)).toBeInstanceOf(AuthenticationError);
      expect((refused as Error).message).toBe(message);
    }
  });

  it('accepts exactly 100 groups of 200 characters', async () => {
    const groups = Array.from({ length: 100 }, (_, i) => `${i}`.padEnd(200, 'g'));
    const caller = await jwt.authenticate({ authorization: `Bearer ${await token('u-7', { groups })}` });
    expect(caller.groups).toHaveLength(100);
  });
});

describe('API key subject and groups', () => {
  const modern = newApiKey('deploy-bot', ['workflows-read'], { subject: 'svc-deploy', groups: ['release-managers', 'ops'] });
  const legacy = newApiKey('dashboard', ['workflows-read']);
  const keys = Authenticator.withKeys(new ApiKeyVerifier({ keys: [modern.entry, legacy.entry] }));

  it("makes a key's caller user:<subject> (username: its name) plus its groups; a key without them stays api-key:<name>", async () => {
    const caller = await keys.authenticate({ 'x-api-key': modern.key });
    expect(caller).toMatchObject({ userId: 'svc-deploy', username: 'deploy-bot', groups: ['release-managers', 'ops'], method: 'api-key' });
    expect(principalsOf(caller)).toEqual(['user:svc-deploy', 'group:release-managers', 'group:ops']);
    const old = await keys.authenticate({ authorization: `Bearer ${legacy.key}` });
    expect(principalsOf(old)).toEqual(['user:api-key:dashboard']);
  });

  it('refuses a keys file whose groups or subject break the bounds, naming the field', () => {
    const entry = { name: 'a', sha256: 'a'.repeat(64), scopes: [] };
    expect(() => new ApiKeyVerifier({ keys: [{ ...entry, groups: TOO_MANY }] })).toThrow(/\/keys\/0\/groups: must not have more than 100 items/);
    expect(() => new ApiKeyVerifier({ keys: [{ ...entry, groups: [HUGE_NAME] }] })).toThrow(/\/keys\/0\/groups\/0/);
    expect(() => new ApiKeyVerifier({ keys: [{ ...entry, groups: ['a,b'] }] })).toThrow(/\/keys\/0\/groups\/0/);
    expect(() => new ApiKeyVerifier({ keys: [{ ...entry, subject: 'two words' }] })).toThrow(/\/keys\/0\/subject/);
    expect(() => new ApiKeyVerifier({ keys: [{ ...entry, subject: 'svc', groups: 'ops' }] })).toThrow(/"subject"\?, "groups"\?/);
  });
});

describe('trusted-proxy X-Switchyard-Groups', () => {
  let proxy: Authenticator;
  beforeAll(async () => {
    proxy = await Authenticator.create({ modes: [], trustProxyIdentity: true } satisfies AuthConfig);
  });

  it('adds the comma-separated groups of the header (spaces trimmed) to the proxied user', async () => {
    const caller = await proxy.authenticate({ 'x-switchyard-user-id': 'u-42', 'x-switchyard-groups': ' ops , finance ,,ops' });
    expect(principalsOf(caller)).toEqual(['user:u-42', 'group:ops', 'group:finance']);
    const groupless = await proxy.authenticate({ 'x-switchyard-user-id': 'u-42' });
    expect(principalsOf(groupless)).toEqual(['user:u-42']);
  });

  it('refuses (401) a header with more than 100 groups or a 10 KB name', async () => {
    const many = await callerOf(proxy, { 'x-switchyard-user-id': 'u-42', 'x-switchyard-groups': TOO_MANY.join(',') });
    expect((many as Error).message).toBe('The X-Switchyard-Groups header lists more than 100 groups (the most accepted)');
    const huge = await callerOf(proxy, { 'x-switchyard-user-id': 'u-42', 'x-switchyard-groups': `ops,${HUGE_NAME}` });
    expect(huge).toBeInstanceOf(AuthenticationError);
    expect((huge as Error).message).toMatch(/^The X-Switchyard-Groups header: entry 2 \(10240 characters\)/);
  });

  it('is ignored without trusted-proxy mode: with SWITCHYARD_AUTH=none everyone is user:anonymous with every right', async () => {
    const none = await Authenticator.create({ modes: [], trustProxyIdentity: false });
    const caller = await none.authenticate({ 'x-switchyard-user-id': 'u-42', 'x-switchyard-groups': 'admins' });
    expect(principalsOf(caller)).toEqual(['user:anonymous']);
    expect(isAdmin(caller)).toBe(true);
  });
});

describe('SWITCHYARD_JWT_GROUPS_CLAIM', () => {
  const jwtEnv = { SWITCHYARD_AUTH: 'jwt', SWITCHYARD_JWT_SECRET: SECRET };

  it('defaults to groups and takes a claim name or a dot-separated path', () => {
    expect(loadConfig(jwtEnv).auth.jwt?.groupsClaim).toBe('groups');
    expect(loadConfig({ ...jwtEnv, SWITCHYARD_JWT_GROUPS_CLAIM: 'realm_access.roles' }).auth.jwt?.groupsClaim).toBe('realm_access.roles');
    expect(loadConfig({ ...jwtEnv, SWITCHYARD_JWT_GROUPS_CLAIM: 'https://switchyard.example.com/groups' }).auth.jwt?.groupsClaim).toBe(
      'https://switchyard.example.com/groups',
    );
  });

  it('refuses a value that is no claim path, naming the variable', () => {
    for (const bad of ['realm_access..roles', '.groups', 'groups.', 'my groups', 'g'.repeat(201)]) {
      let problems: readonly string[] = [];
      try {
        loadConfig({ ...jwtEnv, SWITCHYARD_JWT_GROUPS_CLAIM: bad });
      } catch (error) {
        problems = (error as ConfigError).problems;
      }
      expect(problems, bad).toHaveLength(1);
      expect(problems[0]).toMatch(/^SWITCHYARD_JWT_GROUPS_CLAIM must be a claim name or a dot-separated path of them/);
    }
  });
});

describe('npm run api-key --subject --group', () => {
  const script = fileURLToPath(new URL('../src/scripts/api-key.ts', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-principals-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the subject and the groups into the entry, and the key then authenticates as them', async () => {
    const file = join(dir, 'keys.json');
    const key = execFileSync(process.execPath, ['--import', 'tsx', script, 'deploy-bot', 'workflows-read', '--subject', 'svc-deploy', '--group', 'ops', '--group', 'release-managers', '--file', file], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    expect(stored.keys[0]).toMatchObject({ name: 'deploy-bot', scopes: ['workflows-read'], subject: 'svc-deploy', groups: ['ops', 'release-managers'] });
    const caller = await Authenticator.withKeys(new ApiKeyVerifier(stored)).authenticate({ 'x-api-key': key });
    expect(principalsOf(caller)).toEqual(['user:svc-deploy', 'group:ops', 'group:release-managers']);
  });

  it('gives a key the three non-admin scopes when none are named: workflows-admin must be asked for', () => {
    const file = join(dir, 'defaults.json');
    execFileSync(process.execPath, ['--import', 'tsx', script, 'ci-robot', '--file', file], { stdio: 'ignore' });
    expect(JSON.parse(readFileSync(file, 'utf8')).keys[0].scopes).toEqual(['workflows-read', 'workflows-write', 'workflows-control']);
  });

  it('refuses (exit 2) a group or a subject that is not a principal name, and writes nothing', () => {
    const file = join(dir, 'refused.json');
    for (const args of [['--group', 'two words'], ['--group', HUGE_NAME], ['--subject', 'a,b']]) {
      const run = spawnSync(process.execPath, ['--import', 'tsx', script, 'bot', ...args, '--file', file], { encoding: 'utf8' });
      expect(run.status, args[0]).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/1–200 characters without whitespace or commas/);
    }
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
  });
});
