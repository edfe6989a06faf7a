/**
 * The part of madge's API (8.x, which ships no types) that `no-import-cycles.test.ts` uses:
 * `madge(path, config)` builds the import graph of the files under `path`.
 */
declare module 'madge' {
  interface MadgeConfig {
    /** Extensions of the files to scan, without the dot, e.g. `['ts']`. */
    fileExtensions?: string[];
    /** A tsconfig file (path) whose module resolution madge follows. */
    tsConfig?: string;
    /** Options of the detectives (parsers) by language, e.g. `{ ts: { skipTypeImports: false } }`. */
    detectiveOptions?: Record<string, Record<string, unknown>>;
  }

  interface MadgeResult {
    /** Each file (relative to the scanned path) with the files it imports. */
    obj(): Record<string, string[]>;
    /** Every import circle, each as the list of files along it (relative to the scanned path). */
    circular(): string[][];
    /** `skipped`: the imports madge could not resolve to a file (packages, or broken paths). */
    warnings(): { skipped: string[] };
  }

  function madge(path: string | string[], config?: MadgeConfig): Promise<MadgeResult>;
  export default madge;
}
