/**
 * The `Host` and `Origin` rules of plugins/request-origin.ts (issue #16 item 3), as pure functions;
 * test/edge-security.e2e.test.ts tries them over real sockets.
 */
import { describe, expect, it } from 'vitest';
import { hostAllowed, originAllowed } from '../src/plugins/request-origin.ts';

describe('hostAllowed', () => {
  it('answers loopback names on the port the connection arrived at only', () => {
    for (const host of ['127.0.0.1:8080', 'localhost:8080', '[::1]:8080', 'LOCALHOST:8080', '127.1.2.3:8080']) expect(hostAllowed(host, 8080, []), host).toBe(true);
    for (const host of ['127.0.0.1:9090', 'localhost', 'evil.example:8080', '0.0.0.0:8080', '[::]:8080']) expect(hostAllowed(host, 8080, []), host).toBe(false);
    expect(hostAllowed('localhost', 80, [])).toBe(true);
  });

  it('answers listed names: any port for a bare name, one port for name:port (absent: 80)', () => {
    const listed = ['api.example.com', 'admin.example.com:8443', 'plain.example.com:80'];
    expect(hostAllowed('api.example.com', 8080, listed)).toBe(true);
    expect(hostAllowed('API.example.com:9999', 8080, listed)).toBe(true);
    expect(hostAllowed('admin.example.com:8443', 8080, listed)).toBe(true);
    expect(hostAllowed('admin.example.com', 8080, listed)).toBe(false);
    expect(hostAllowed('plain.example.com', 8080, listed)).toBe(true);
    expect(hostAllowed('api.example.com.evil.example', 8080, listed)).toBe(false);
  });

  it('refuses what is not a host: absent, credentials, paths', () => {
    for (const host of [undefined, '', 'user@localhost:8080', 'localhost:8080/x', 'localhost:8080?x', 'a b']) expect(hostAllowed(host, 8080, ['localhost']), String(host)).toBe(false);
  });
});

describe('originAllowed', () => {
  it('lets requests without Origin through (curl, SDKs, the bridge)', () => {
    expect(originAllowed(undefined, 'localhost:8080', [])).toBe(true);
  });

  it("accepts the service's own origin, whatever the scheme, and listed CORS origins", () => {
    expect(originAllowed('http://localhost:8080', 'localhost:8080', [])).toBe(true);
    expect(originAllowed('https://api.example.com', 'api.example.com', [])).toBe(true);
    expect(originAllowed('https://canvas.example.com', 'api.example.com', ['https://canvas.example.com'])).toBe(true);
    expect(originAllowed('https://anything.example', 'api.example.com', ['*'])).toBe(true);
  });

  it('accepts pages on a listed host when a proxy forwards another Host', () => {
    expect(originAllowed('https://api.example.com', '127.0.0.1:8080', [], ['api.example.com'])).toBe(true);
    expect(originAllowed('https://api.example.com', '127.0.0.1:8080', [], ['api.example.com:443'])).toBe(true);
    expect(originAllowed('https://api.example.com', '127.0.0.1:8080', [], ['api.example.com:8443'])).toBe(false);
  });

  it('refuses foreign, opaque and malformed origins, and other local ports', () => {
    expect(originAllowed('https://evil.example', 'localhost:8080', [])).toBe(false);
    expect(originAllowed('null', 'localhost:8080', ['https://canvas.example.com'])).toBe(false);
    expect(originAllowed('not a url', 'localhost:8080', [])).toBe(false);
    expect(originAllowed('http://localhost:5173', 'localhost:8080', [])).toBe(false);
    expect(originAllowed('http://localhost:8080', undefined, [])).toBe(false);
  });
});
