import { describe, expect, it } from 'vitest';
import { planDirective } from './run-control.ts';

describe('planDirective', () => {
  it('applies directives to runs nobody executes, signals running ones, and names the status of a conflict', () => {
    expect(planDirective('pause', 'pending', null)).toEqual({ kind: 'apply' });
    expect(planDirective('pause', 'awaiting_approval', null)).toEqual({ kind: 'apply' });
    expect(planDirective('pause', 'running', null)).toEqual({ kind: 'signal', pending: 'pause' });
    expect(planDirective('pause', 'running', 'pause').kind).toBe('noop');
    expect(planDirective('pause', 'paused', null).kind).toBe('noop');
    expect(planDirective('pause', 'completed', null)).toEqual({ kind: 'conflict', message: 'Cannot pause a run that is completed' });

    expect(planDirective('resume', 'paused', null)).toEqual({ kind: 'apply' });
    expect(planDirective('resume', 'running', 'pause')).toEqual({ kind: 'withdraw_pause' });
    expect(planDirective('resume', 'running', null).kind).toBe('noop');
    expect(planDirective('resume', 'awaiting_approval', null).kind).toBe('noop');
    expect(planDirective('resume', 'failed', null).kind).toBe('conflict');

    expect(planDirective('cancel', 'paused', null)).toEqual({ kind: 'apply' });
    expect(planDirective('cancel', 'running', 'pause')).toEqual({ kind: 'signal', pending: 'cancel' });
    expect(planDirective('cancel', 'running', 'timeout').kind).toBe('noop');
    expect(planDirective('cancel', 'cancelled', null).kind).toBe('noop');
    expect(planDirective('cancel', 'completed', null).kind).toBe('conflict');
    expect(planDirective('pause', 'running', 'cancel')).toEqual({ kind: 'conflict', message: 'Cannot pause a run that is being cancelled' });
    expect(planDirective('timeout', 'awaiting_approval', null)).toEqual({ kind: 'apply' });
    expect(planDirective('timeout', 'cancelled', null).kind).toBe('conflict');
  });
});
