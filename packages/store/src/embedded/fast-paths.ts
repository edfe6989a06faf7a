/**
 * Switches for the embedded store's hand-written fast paths, each of which re-implements a rule
 * of MongoDB (or of js-bson) that a reference implementation also applies. They are all on; only
 * bench/store-fast-paths.ts turns one off at a time, to measure what it buys against its
 * reference (the differential tests `*.differential.test.ts` check that both agree). Nothing else
 * should change them: with a switch off the store behaves the same, only slower.
 *
 * - `plainUpdate`: plain-update.ts applies `$set`/`$inc`/`$min`/`$max`/`$currentDate` on plain
 *   paths by copy on write (off: mingo's update operators on copies of the touched fields).
 * - `directEquality`: query.ts compares top-level equalities directly (off: mingo's `Query`).
 * - `projection`: projection.ts applies simple projections (off: a mingo cursor's projection).
 * - `copyOnce`: copy.ts copies stored and normalized documents by a plain walk, sharing immutable
 *   parts (off: a BSON round trip, the driver's own conversion).
 * - `bsonWriter`: bson-writer.ts writes BSON reusing immutable parts' bytes (off: js-bson's
 *   `BSON.serialize`).
 */
export const FAST_PATHS = {
  plainUpdate: true,
  directEquality: true,
  projection: true,
  copyOnce: true,
  bsonWriter: true,
};

/** The name of one fast path of {@link FAST_PATHS}. */
export type FastPath = keyof typeof FAST_PATHS;
