/** The service logger (src/logger.ts): credentials redacted, requests logged without headers or bodies. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { createLogger, LOG_CENSOR, loggerOptions } from '../src/logger.ts';

const SECRET = 'tok-0123456789abcdef';

/** A logger at debug writing into the returned array of parsed records. */
function capture(): { records: any[]; logger: ReturnType<typeof createLogger> } {
  const records: any[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') records.push(JSON.parse(line));
      done();
    },
  });
  return { records, logger: createLogger('debug', sink) };
}

describe('the service logger', () => {
  it('redacts secret-named properties one level down', () => {
    const { records, logger } = capture();
    logger.info({ auth: { apiToken: SECRET, token: SECRET, secret: SECRET, password: SECRET, user: 'ada' } }, 'configured');
    expect(records[0].auth).toEqual({ apiToken: LOG_CENSOR, token: LOG_CENSOR, secret: LOG_CENSOR, password: LOG_CENSOR, user: 'ada' });
    expect(JSON.stringify(records)).not.toContain(SECRET);
  });

  it('logs a request as method, URL, host and remote address: no headers, no body', () => {
    const { records, logger } = capture();
    const req = {
      method: 'POST',
      url: '/api/v1/workflows',
      host: 'localhost',
      ip: '127.0.0.1',
      socket: { remotePort: 5000 },
      headers: { authorization: `Bearer ${SECRET}`, 'x-api-key': SECRET, cookie: `s=${SECRET}` },
      body: { password: SECRET, note: SECRET },
    };
    logger.info({ req }, 'incoming request');
    expect(records[0].req).toEqual({ method: 'POST', url: '/api/v1/workflows', host: 'localhost', remoteAddress: '127.0.0.1', remotePort: 5000 });
    expect(JSON.stringify(records)).not.toContain(SECRET);
  });

  it('redacts the credential headers too, should a serializer ever let headers through', () => {
    const records: any[] = [];
    const sink = new Writable({ write(chunk: Buffer, _encoding, done) { records.push(JSON.parse(chunk.toString('utf8'))); done(); } });
    // The same options without the serializers: the redaction paths alone.
    const logger = pino({ ...loggerOptions('debug'), serializers: {} }, sink);
    logger.info({ req: { headers: { authorization: `Bearer ${SECRET}`, 'x-api-key': SECRET, cookie: `s=${SECRET}`, accept: 'application/json' } } }, 'incoming request');
    expect(records[0].req.headers).toEqual({ authorization: LOG_CENSOR, 'x-api-key': LOG_CENSOR, cookie: LOG_CENSOR, accept: 'application/json' });
  });
});
