/** Request logging (src/plugins/request-log.ts): one line per request at info, the arrival too at debug. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { createLogger } from '../src/logger.ts';
import type { AppServices } from '../src/services/index.ts';

/** Records of a request to /healthz through an app logging at `level`. */
async function recordsAt(level: string): Promise<Array<Record<string, any>>> {
  const records: Array<Record<string, any>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') records.push(JSON.parse(line));
      done();
    },
  });
  const app = await buildApp({ services: {} as AppServices, logger: createLogger(level, sink), docs: false });
  try {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  } finally {
    await app.close();
  }
  return records.filter((record) => record.reqId !== undefined);
}

describe('request logging', () => {
  it('writes one line per request at info: the request, its status and response time', async () => {
    const records = await recordsAt('info');
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ msg: 'request completed', req: { method: 'GET', url: '/healthz' }, res: { statusCode: 200 } });
    expect(typeof records[0]!.responseTime).toBe('number');
  });

  it('logs the arrival too at debug', async () => {
    expect((await recordsAt('debug')).map((record) => record.msg)).toEqual(['incoming request', 'request completed']);
  });
});
