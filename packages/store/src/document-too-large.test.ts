import { describe, expect, it } from 'vitest';
import { DocumentTooLargeError, isDocumentTooLarge } from './document-collection.ts';

describe('isDocumentTooLarge', () => {
  it("recognizes both backends' refusals of a document over 16 MiB", () => {
    expect(isDocumentTooLarge(new DocumentTooLargeError("document is 17000000 bytes of BSON, over MongoDB's 16 MiB limit"))).toBe(true);
    expect(isDocumentTooLarge(Object.assign(new Error('BSONObj size: 17000000 (0x1036640) is invalid'), { code: 10334 }))).toBe(true);
    expect(isDocumentTooLarge(Object.assign(new Error('Resulting document after update is larger than 16777216'), { code: 17419 }))).toBe(true);
    expect(isDocumentTooLarge(new Error('Document is larger than the maximum size 16777216'))).toBe(true);
  });

  it('does not take other errors for one', () => {
    expect(isDocumentTooLarge(Object.assign(new Error('E11000 duplicate key error'), { code: 11000 }))).toBe(false);
    expect(isDocumentTooLarge(new Error('connection refused'))).toBe(false);
    expect(isDocumentTooLarge('too large')).toBe(false);
  });
});
