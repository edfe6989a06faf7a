import type { Document } from '../document-collection.ts';

/**
 * A document shape for tests, whose `_id` may be a number or string too: the driver's `Filter`
 * types `_id` of a plain `Document` as ObjectId.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type TestDoc = Document & { _id?: any };
