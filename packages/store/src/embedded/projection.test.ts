/** The projections applied without mingo give mingo's result (field order aside), and the others are left to mingo. */
import { describe, expect, it } from 'vitest';
import { ObjectId } from 'mongodb';
import { Query } from 'mingo';
import { applyProjection, compileProjection } from './projection.ts';
import { compileFilter } from './query.ts';

const doc = {
  _id: new ObjectId(),
  status: 'awaiting_approval',
  wake_seq: 2,
  big: { nested: [1, 2, 3] },
  gates: [
    { step_id: 'a', decided_at: new Date(0) },
    { step_id: 'a', decided_at: null },
    { step_id: 'b', decided_at: null },
  ],
};

const viaMingo = (projection: Record<string, unknown>) => new Query({}).find<Record<string, unknown>>([doc], projection).all()[0];
const viaFastPath = (projection: Record<string, unknown>) => applyProjection(doc, compileProjection(projection, compileFilter)!)!;

describe('simple projections', () => {
  it.each([
    [{ status: 1, wake_seq: 1 }],
    [{ status: 1, _id: 0 }],
    [{ big: 0, gates: 0 }],
    [{ big: 0, _id: 0 }],
    [{ _id: 1 }],
    [{ _id: 0 }],
    [{ missing: 1 }],
    [{ status: 1, gates: { $elemMatch: { step_id: 'a', decided_at: null } } }],
    [{ status: 1, gates: { $elemMatch: { step_id: 'c' } } }],
  ])('%j as mingo does', (projection) => {
    expect(viaFastPath(projection)).toEqual(viaMingo(projection));
  });

  it('keeps the document order of fields', () => {
    expect(Object.keys(viaFastPath({ wake_seq: 1, status: 1 }))).toEqual(['_id', 'status', 'wake_seq']);
  });

  it('leaves nested paths, other operators and mixed modes to mingo', () => {
    for (const projection of [{ 'big.nested': 1 }, { gates: { $slice: 1 } }, { status: 1, big: 0 }, { gates: { $elemMatch: { $or: [{ step_id: 'a' }] } } }, {}]) {
      expect(compileProjection(projection, compileFilter)).toBeNull();
    }
  });
});
