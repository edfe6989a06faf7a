/**
 * Entry module of a YAML parser thread (yaml-parse-pool.ts): exports yaml-parse-task.ts's task.
 * Plain JavaScript because a worker thread does not always inherit a TypeScript loader: under
 * `npm start` (tsx) it does and the task is imported directly; under vitest it does not, and the
 * task is imported through tsx's scoped loader (tsImport), which loads its TypeScript imports too.
 */
let task;
try {
  ({ default: task } = await import('./yaml-parse-task.ts'));
} catch (error) {
  if (error?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
  const { tsImport } = await import('tsx/esm/api');
  ({ default: task } = await tsImport('./yaml-parse-task.ts', import.meta.url));
}

export default task;
