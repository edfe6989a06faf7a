import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { publicErrorText } from './public-text.ts';

describe('publicErrorText', () => {
  const scrub = publicErrorText({ dataDir: '/srv/switchyard/data' });

  it('replaces the data directory, keeping the path below it', () => {
    expect(scrub('Access denied - path outside allowed directories: /etc/passwd not in /srv/switchyard/data/files')).toBe(
      'Access denied - path outside allowed directories: /etc/passwd not in $DATA_DIR/files',
    );
    expect(scrub('ENOENT: open \'/srv/switchyard/data\'')).toBe("ENOENT: open '$DATA_DIR'");
  });

  it('replaces the resolved form of a data directory reached through a symlink', () => {
    const real = mkdtempSync(join(tmpdir(), 'public-text-'));
    const link = `${real}-link`;
    symlinkSync(real, link);
    const viaLink = publicErrorText({ dataDir: link });
    expect(viaLink(`denied: ${real}/files/x and ${link}/files/y`)).toBe('denied: $DATA_DIR/files/x and $DATA_DIR/files/y');
  });

  it('replaces origins of any scheme, IPv4 addresses with or without port and IPv6 loopback, keeping punctuation and paths', () => {
    expect(scrub('HTTP POST http://10.0.0.5:8080/hook failed: connect ECONNREFUSED 10.0.0.5:8080')).toBe(
      'HTTP POST [address]/hook failed: connect ECONNREFUSED [address]',
    );
    expect(scrub('refused to send to https://internal.corp.example: not listed')).toBe('refused to send to [address]: not listed');
    expect(scrub('redirected to (https://user:pw@api.example.com:8443/x?y=1).')).toBe('redirected to ([address]/x?y=1).');
    expect(scrub('connect ECONNREFUSED ::1:8089; also http://[::1]:9000/a and mongodb://db:27017')).toBe(
      'connect ECONNREFUSED [address]; also [address]/a and [address]',
    );
    expect(scrub('host 192.168.1.20 is down')).toBe('host [address] is down');
    expect(scrub('connect ECONNREFUSED fd00::5:443')).toBe('connect ECONNREFUSED [address]');
    expect(scrub('connect EHOSTUNREACH 2001:db8:0:0:0:0:0:1 - Local (:::0)')).toBe('connect EHOSTUNREACH [address] - Local ([address])');
    expect(scrub('getaddrinfo ENOTFOUND hooks.internal.corp')).toBe('getaddrinfo ENOTFOUND [address]');
    expect(scrub('getaddrinfo EAI_AGAIN db; retry')).toBe('getaddrinfo EAI_AGAIN [address]; retry');
  });

  it('leaves text without paths or addresses alone', () => {
    const text = "Node 'A' failed: tool error: value must be 1.5 or a 2:3 ratio at 10:30; version 1.2.3 (see Foo::bar)";
    expect(scrub(text)).toBe(text);
    expect(publicErrorText()('plain')).toBe('plain');
  });
});
