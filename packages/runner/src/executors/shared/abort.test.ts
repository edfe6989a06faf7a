import { describe, expect, it } from 'vitest';
import { linkedAbortController } from './abort.ts';

describe('linkedAbortController', () => {
  it('aborts with the reason of whichever source aborts first, and not after unlinking', () => {
    const run = new AbortController();
    const attempt = new AbortController();
    const first = linkedAbortController([run.signal, attempt.signal]);
    attempt.abort('attempt over');
    run.abort('run cancelled');
    expect(first.controller.signal.reason).toBe('attempt over');

    const other = new AbortController();
    const second = linkedAbortController([other.signal]);
    second.unlink();
    other.abort('late');
    expect(second.controller.signal.aborted).toBe(false);
  });

  it('starts aborted when a source already is, and aborts by itself too', () => {
    const done = new AbortController();
    done.abort('before');
    expect(linkedAbortController([done.signal]).controller.signal.reason).toBe('before');
    const own = linkedAbortController([new AbortController().signal]);
    own.controller.abort('timeout');
    expect(own.controller.signal.reason).toBe('timeout');
  });
});
