import { describe, expect, it } from 'vitest';
import { MongoNetworkError, MongoServerError } from 'mongodb';
import { isStoreUnavailable } from '../errors.ts';
import { decorateCollection } from '../collection-decorator.ts';
import type { DocumentCollection } from '../document-collection.ts';
import { translateTransientErrors } from './transient-errors.ts';

/** A collection whose every call fails with `error`. */
function failingWith(error: Error): DocumentCollection {
  const fail = () => Promise.reject(error);
  return {
    collectionName: 'workflow_runs',
    insertOne: fail,
    findOne: fail,
    find: fail,
    countDocuments: fail,
    findOneAndUpdate: fail,
    updateOne: fail,
    updateMany: fail,
    deleteOne: fail,
    deleteMany: fail,
    createIndex: fail,
    dropIndex: fail,
  };
}

describe('the MongoDB backend during an outage or failover', () => {
  it('reports a dropped connection as store unavailable, with the operation, a retry hint and the cause', async () => {
    const cause = new MongoNetworkError('connection 3 to 10.0.0.5:27017 closed');
    const error = await decorateCollection(failingWith(cause), translateTransientErrors).updateOne({ status: 'running' }, { $set: { a: 1 } }).catch((e: unknown) => e);
    expect(isStoreUnavailable(error)).toBe(true);
    expect(error).toMatchObject({ retryAfterMs: 5_000, cause });
    expect((error as Error).message).toMatch(/^MongoDB is unavailable \(updateOne failed: connection 3 .* closed\); retry shortly$/);
  });

  it('reports a primary stepping down (NotWritablePrimary) and an error labelled retryable as store unavailable', async () => {
    const steppedDown = new MongoServerError({ message: 'not primary', code: 10107, codeName: 'NotWritablePrimary' });
    const labelled = new MongoServerError({ message: 'interrupted', code: 1, errorLabels: ['RetryableWriteError'] });
    for (const cause of [steppedDown, labelled]) {
      const error = await decorateCollection(failingWith(cause), translateTransientErrors).find({}).catch((e: unknown) => e);
      expect(isStoreUnavailable(error)).toBe(true);
    }
  });

  it('leaves every other error as it is: a duplicate key stays a duplicate key', async () => {
    const duplicate = new MongoServerError({ message: 'E11000 duplicate key error', code: 11000 });
    const error = await decorateCollection(failingWith(duplicate), translateTransientErrors).insertOne({ _id: 'a' }).catch((e: unknown) => e);
    expect(error).toBe(duplicate);
    const bug = new TypeError('not a store error');
    await expect(decorateCollection(failingWith(bug), translateTransientErrors).findOne({})).rejects.toBe(bug);
  });
});
