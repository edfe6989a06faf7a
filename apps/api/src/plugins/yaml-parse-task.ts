/**
 * What a YAML parser thread runs (yaml-parse-pool.ts; loaded through yaml-parse-worker.mjs):
 * one YAML body's text → its JSON text, by the shared parser (`@switchyard/domain/yaml-definition`).
 * Problems come back as data, not as thrown errors, because an error crossing the thread boundary
 * loses its class and fields.
 */
import { YamlDefinitionError, yamlDefinitionToJson, type YamlProblemKind } from '@switchyard/domain/yaml-definition';

/** One parse: the body's text and the route's body limit in bytes. */
export interface YamlParseTask {
  text: string;
  limitBytes: number;
}

/** The JSON text of the body's value, or why the body was refused (the shared parser's kind and message). */
export type YamlParseOutcome = { json: string } | { problem: { kind: YamlProblemKind; message: string } };

/** Parses `task.text`; see {@link YamlParseOutcome}. Throws only what is not a YAML problem (a bug). */
export default function parseYamlTask(task: YamlParseTask): YamlParseOutcome {
  try {
    return { json: yamlDefinitionToJson(task.text, task.limitBytes) };
  } catch (error) {
    if (error instanceof YamlDefinitionError) return { problem: { kind: error.kind, message: error.message } };
    throw error;
  }
}
