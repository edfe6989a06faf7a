import { immutable, isImmutable } from './immutable.ts';
import { describe, expect, it } from 'vitest';
import { camelToSnake, fromDocument, snakeToCamel, toDocument } from './mapping.ts';

describe('mapping', () => {
  it('converts our keys between camelCase and snake_case', () => {
    expect(camelToSnake('backoffBaseSeconds')).toBe('backoff_base_seconds');
    expect(snakeToCamel('backoff_base_seconds')).toBe('backoffBaseSeconds');
    expect(snakeToCamel('a2a_pool')).toBe('a2aPool');
    expect(camelToSnake('a2aPool')).toBe('a2a_pool');
    expect(snakeToCamel('_id')).toBe('_id');
  });

  it('renames nested structure keys but never the keys of user data', () => {
    const node = {
      nodeType: 'step',
      stepConfig: { maxRetries: 1 },
      config: { someKey: { innerKey: 1 }, list: [{ camelCase: true }] },
      trueSteps: [{ conditionCel: 'x', config: { keepMe: 1 } }],
    };
    const doc = toDocument(node);
    expect(doc).toEqual({
      node_type: 'step',
      step_config: { max_retries: 1 },
      config: { someKey: { innerKey: 1 }, list: [{ camelCase: true }] },
      true_steps: [{ condition_cel: 'x', config: { keepMe: 1 } }],
    });
    expect(fromDocument(doc)).toEqual(node);
  });

  it('escapes $ and . in user keys reversibly, leaving ordinary keys readable', () => {
    const input = { initialInput: { $where: 1, 'a.b': { '~x': 2, plain: 3 }, 'mixed$.~': [{ 'k.k': 1 }] } };
    const doc = toDocument<Record<string, Record<string, unknown>>>(input);
    const stored = doc.initial_input!;
    expect(Object.keys(stored)).toEqual(['~dwhere', 'a~pb', 'mixed~d~p~t']);
    expect(JSON.stringify(stored)).not.toMatch(/"[^"]*[.$][^"]*":/);
    expect(fromDocument(doc)).toEqual(input);
  });

  it('escapes NUL in user keys (BSON cannot store it) and restores it', () => {
    const input = { userInput: { 'a\0b': 1 } };
    const doc = toDocument<Record<string, Record<string, unknown>>>(input);
    expect(Object.keys(doc.user_input!)).toEqual(['a~0b']);
    expect(fromDocument(doc)).toEqual(input);
  });

  it('passes Dates and class instances (ObjectIds) through and drops undefined fields', () => {
    class ObjectIdLike {
      readonly hex = '0123456789abcdef01234567';
    }
    const id = new ObjectIdLike();
    const at = new Date('2024-01-01T00:00:00Z');
    expect(toDocument({ runId: id, startedAt: at, gone: undefined })).toEqual({ run_id: id, started_at: at });
  });
});

describe('mapping immutable structures', () => {
  it('maps an immutable structure once per direction, each result the memo of the other', () => {
    const stored = immutable([{ node_type: 'step', step_config: { max_retries: 1 }, config: { 'user~pkey': 1, keep_me: true } }]);
    const record = fromDocument<unknown[]>(stored);
    expect(record).toEqual([{ nodeType: 'step', stepConfig: { maxRetries: 1 }, config: { 'user.key': 1, keep_me: true } }]);
    expect(fromDocument(stored)).toBe(record);
    expect(isImmutable(record)).toBe(true);
    expect(toDocument(record)).toBe(stored);
    // A mutable structure is mapped afresh every time.
    const fresh = [{ node_type: 'step' }];
    expect(fromDocument(fresh)).not.toBe(fromDocument(fresh));
  });
});

describe('mapping deeply nested user data', () => {
  /** `{ a: { a: … } }`, `depth` levels, its innermost key `key`. */
  function nested(depth: number, key = 'a'): Record<string, unknown> {
    let value: Record<string, unknown> = { [key]: 1 };
    for (let i = 1; i < depth; i++) value = { a: value };
    return value;
  }

  it('walks 100,000 levels without overflowing the stack: unchanged keys keep the very object, a changed one deep down is escaped', () => {
    const deep = nested(100_000);
    expect((toDocument<{ initial_input: unknown }>({ initialInput: deep })).initial_input).toBe(deep);
    const frozen = immutable(nested(5_000));
    expect((toDocument<{ initial_input: unknown }>({ initialInput: frozen })).initial_input).toBe(frozen);
    expect((toDocument<{ initial_input: unknown }>({ initialInput: frozen })).initial_input).toBe(frozen); // remembered
    const dotted = nested(50, 'a.b');
    let inner = (toDocument<{ initial_input: Record<string, any> }>({ initialInput: dotted })).initial_input;
    for (let i = 1; i < 50; i++) inner = inner.a;
    expect(Object.keys(inner)).toEqual(['a~pb']);
  });
});
