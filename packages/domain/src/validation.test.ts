import { describe, expect, it } from 'vitest';
import { InvalidRequestError } from './errors.ts';
import type { WorkflowNodeInput } from './schemas/workflow.ts';
import { MAX_TOTAL_LOOP_ITERATIONS, countNodes, normalizeCanvas, normalizeDefinition, normalizeTags, type DefinitionChecks } from './validation.ts';

const checks: DefinitionChecks = {
  hasExecutor: (key) => ['echo', 'tool', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6'].includes(key),
  checkPoolMember: (key) => {
    if (!checks.hasExecutor(key)) return `unresolvable a2aPool agent '${key}'`;
    return key === 'tool' ? "a2aPool agent 'tool' is an mcp executor, not an A2A agent" : null;
  },
  checkExpression: (expression) => (expression.includes('@') ? `syntax error in '${expression}'` : null),
  checkConfig: (config) =>
    Object.entries(config).flatMap(([key, value]) =>
      value && typeof value === 'object' && '$cel' in value && String((value as { $cel: unknown }).$cel).includes('@')
        ? [`config.${key}: syntax error in '${String((value as { $cel: unknown }).$cel)}'`]
        : [],
    ),
};

const step = (name: string, extra: Partial<WorkflowNodeInput> = {}): WorkflowNodeInput => ({ name, nodeType: 'step', executorKey: 'echo', ...extra });

/** The problems normalizeDefinition reports for `nodes` (fails the test when it accepts them). */
function problemsOf(nodes: WorkflowNodeInput[]): string[] {
  try {
    normalizeDefinition(nodes, checks);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequestError);
    return (error as InvalidRequestError).problems ?? [(error as Error).message];
  }
  throw new Error('expected the definition to be rejected');
}

describe('normalizeDefinition', () => {
  it('fills defaults, generates ids and always returns container lists', () => {
    const [node] = normalizeDefinition([step('A', { stepConfig: { maxRetries: 2 } })], checks);
    expect(node!.id).toMatch(/[0-9a-f-]{36}/);
    expect(node).toMatchObject({
      position: { x: 0, y: 0 },
      a2aPool: [],
      config: {},
      children: [],
      trueSteps: [],
      falseSteps: [],
      choices: [],
      conditionCel: null,
      loopConfig: null,
      humanReview: null,
      stepConfig: { maxRetries: 2, onError: 'fail', backoffBaseSeconds: 1, backoffMaxSeconds: 60, timeoutSeconds: null },
    });
  });

  it('keeps client ids and ignores unknown legacy fields', () => {
    const [node] = normalizeDefinition([{ ...step('A'), id: 'node-1', requireApproval: true } as WorkflowNodeInput], checks);
    expect(node!.id).toBe('node-1');
    expect(node).not.toHaveProperty('requireApproval');
  });

  it('accepts every node type in a valid tree and counts its nodes', () => {
    const nodes = normalizeDefinition(
      [
        step('A'),
        { name: 'P', nodeType: 'parallel', children: [step('P1'), step('P2')] },
        { name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 3, endConditionCel: 'loop_state.iteration >= 2.0' }, children: [step('L1')] },
        { name: 'C', nodeType: 'condition', conditionCel: 'input.x', trueSteps: [step('T1'), step('T2')], falseSteps: [step('F1')] },
        { name: 'R', nodeType: 'router', conditionCel: 'input.kind', choices: [{ name: 'a', steps: [step('RA')] }, { name: 'b', steps: [step('RB')] }] },
      ],
      checks,
    );
    expect(countNodes(nodes)).toBe(13);
  });

  it('rejects an empty definition', () => {
    expect(problemsOf([])).toEqual(['A workflow needs at least one root node']);
  });

  it('requires exactly one of executorKey and a2aPool on steps, and known keys', () => {
    expect(problemsOf([{ name: 'S', nodeType: 'step' }])[0]).toContain('need an executorKey or an a2aPool');
    expect(problemsOf([step('S', { a2aPool: ['a1'] })])[0]).toContain('either executorKey or a2aPool, not both');
    expect(problemsOf([step('S', { executorKey: 'nope' })])[0]).toContain("unknown executorKey 'nope'");
    expect(problemsOf([{ name: 'S', nodeType: 'step', a2aPool: ['a1', 'ghost'] }])[0]).toContain("unresolvable a2aPool agent 'ghost'");
    // What may stand in a pool is the runner's call (by executor kind): its answer is reported as is.
    expect(problemsOf([{ name: 'S', nodeType: 'step', a2aPool: ['a1', 'tool'] }])[0]).toContain("a2aPool agent 'tool' is an mcp executor, not an A2A agent");
    expect(problemsOf([{ name: 'S', nodeType: 'step', a2aPool: ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'] }])[0]).toContain('at most 5 agents');
  });

  it('enforces container rules per node type', () => {
    expect(problemsOf([step('S', { children: [step('X')] })])[0]).toContain('step nodes must not have children');
    expect(problemsOf([{ name: 'P', nodeType: 'parallel', children: [step('X')] }])[0]).toContain('at least 2 children');
    expect(problemsOf([{ name: 'L', nodeType: 'loop', children: [step('X')] }])[0]).toContain('need loopConfig');
    expect(problemsOf([{ name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 2 }, children: [] }])[0]).toContain('at least 1 child');
    expect(problemsOf([{ name: 'C', nodeType: 'condition', conditionCel: 'true', trueSteps: [] }])[0]).toContain('at least 1 step in trueSteps');
    expect(problemsOf([{ name: 'C', nodeType: 'condition', trueSteps: [step('T')] }])[0]).toContain('condition nodes need conditionCel');
    expect(problemsOf([{ name: 'C', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('T')], choices: [{ name: 'a', steps: [step('X')] }] }])[0]).toContain(
      'must not have choices',
    );
  });

  it('enforces router choices: at least two, unique names, non-empty steps', () => {
    expect(problemsOf([{ name: 'R', nodeType: 'router', conditionCel: 'x', choices: [{ name: 'a', steps: [step('A')] }] }])[0]).toContain('at least 2 choices');
    const problems = problemsOf([
      { name: 'R', nodeType: 'router', conditionCel: 'input.k', choices: [{ name: 'a', steps: [step('A')] }, { name: 'a', steps: [] }] },
    ]);
    expect(problems).toEqual([
      "Node 'R' (nodes[0]): duplicate router choice name 'a'",
      "Node 'R' (nodes[0]): router choice 'a' needs at least 1 step",
    ]);
  });

  it('forbids stepConfig outside steps', () => {
    const problems = problemsOf([{ name: 'C', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('T')], stepConfig: { maxRetries: 1 } }]);
    expect(problems[0]).toContain('condition nodes must not define stepConfig');
  });

  it('reports CEL problems with the node, its path and the field', () => {
    const problems = problemsOf([
      step('A', { config: { to: { $cel: 'input.@' } } }),
      { name: 'C', nodeType: 'condition', conditionCel: '1 @ 2', trueSteps: [step('T')] },
      { name: 'L', nodeType: 'loop', loopConfig: { maxIterations: 2, endConditionCel: '@' }, children: [step('X')] },
    ]);
    expect(problems).toEqual([
      "Node 'A' (nodes[0]): config.to: syntax error in 'input.@'",
      "Node 'C' (nodes[1]): conditionCel: syntax error in '1 @ 2'",
      "Node 'L' (nodes[2]): loopConfig.endConditionCel: syntax error in '@'",
    ]);
  });

  it('accepts UUIDs and ObjectId-like ids, and rejects ids that could collide with gate addresses', () => {
    expect(() => normalizeDefinition([step('A', { id: '67a3f2e8c4b1d5a6f7e8d9c0' }), step('B', { id: 'node-2_b.1' })], checks)).not.toThrow();
    expect(problemsOf([step('A', { id: 'A:review' })])[0]).toContain("node id 'A:review' may only use letters, digits");
    expect(problemsOf([step('A', { id: 'n@1' })])[0]).toContain('may only use');
  });

  it('rejects a config nested deeper than MongoDB could store', () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 40; i++) deep = { next: deep };
    expect(problemsOf([step('A', { config: deep })])[0]).toContain('config nests deeper than 32 levels');
  });

  it('rejects duplicate node ids anywhere in the tree', () => {
    const problems = problemsOf([step('A', { id: 'x' }), { name: 'P', nodeType: 'parallel', children: [step('B', { id: 'x' }), step('C')] }]);
    expect(problems).toEqual(["Node 'B' (nodes[1].children[0]): duplicate node id 'x'"]);
  });

  it('collects every problem at once, naming nested paths', () => {
    const problems = problemsOf([
      { name: 'C', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('T', { executorKey: 'nope' })], falseSteps: [{ name: 'F', nodeType: 'step' }] },
    ]);
    expect(problems).toEqual([
      "Node 'T' (nodes[0].trueSteps[0]): unknown executorKey 'nope'",
      "Node 'F' (nodes[0].falseSteps[0]): step nodes need an executorKey or an a2aPool",
    ]);
  });

  describe('total loop iterations', () => {
    const loop = (name: string, maxIterations: number, children: WorkflowNodeInput[]): WorkflowNodeInput => ({ name, nodeType: 'loop', loopConfig: { maxIterations }, children });

    it('refuses three nested loops of 1,000 at the loop that crosses the bound, once per chain', () => {
      const problems = problemsOf([loop('Outer', 1000, [loop('Middle', 1000, [loop('Inner', 1000, [step('Body')])])])]);
      expect(MAX_TOTAL_LOOP_ITERATIONS).toBe(100_000);
      expect(problems).toEqual([
        "Node 'Middle' (nodes[0].children[0]): loopConfig.maxIterations: nested loops would run up to 1,000,000 iterations ('Outer' 1,000 × 'Middle' 1,000); " +
          'the product of maxIterations along nested loops may be at most 100,000',
      ]);
    });

    it('accepts a chain whose product is exactly the bound, and sequential loops as separate chains', () => {
      expect(() => normalizeDefinition([loop('A', 100, [loop('B', 100, [loop('C', 10, [step('X')])])])], checks)).not.toThrow();
      expect(() => normalizeDefinition([loop('A', 1000, [loop('B', 100, [step('X')]), loop('C', 100, [step('Y')])])], checks)).not.toThrow();
    });

    it('follows chains through parallel, condition and router nodes', () => {
      const problems = problemsOf([
        loop('Outer', 1000, [
          { name: 'P', nodeType: 'parallel', children: [step('P1'), loop('InParallel', 101, [step('X')])] },
          { name: 'C', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('T')], falseSteps: [loop('InElse', 200, [step('Y')])] },
          { name: 'R', nodeType: 'router', conditionCel: 'input.k', choices: [{ name: 'a', steps: [loop('InChoice', 500, [step('Z')])] }, { name: 'b', steps: [step('B')] }] },
        ]),
      ]);
      expect(problems.map((problem) => problem.split(':')[0])).toEqual([
        "Node 'InParallel' (nodes[0].children[0].children[1])",
        "Node 'InElse' (nodes[0].children[1].falseSteps[0])",
        "Node 'InChoice' (nodes[0].children[2].choices[0].steps[0])",
      ]);
      expect(problems[0]).toContain("up to 101,000 iterations ('Outer' 1,000 × 'InParallel' 101)");
    });
  });

  describe('total step executions', () => {
    const loop = (name: string, maxIterations: number, children: WorkflowNodeInput[]): WorkflowNodeInput => ({ name, nodeType: 'loop', loopConfig: { maxIterations }, children });

    it('refuses many sibling steps under a bounded loop chain that together imply millions of executions', () => {
      // Each chain is within MAX_TOTAL_LOOP_ITERATIONS, but 150 steps under 100,000 iterations imply 15 million.
      const steps = Array.from({ length: 150 }, (_, i) => step(`S${i}`));
      const problems = problemsOf([loop('Outer', 1000, [loop('Inner', 100, steps)])]);
      expect(problems).toEqual([
        'A run of this workflow could execute up to 15,000,000 steps (every step times the maxIterations of the loops around it); ' +
          'at most 200,000 are allowed (SWITCHYARD_MAX_STEP_EXECUTIONS)',
      ]);
    });

    it('counts steps outside loops once and follows the configured bound exactly', () => {
      const definition = [step('A'), loop('L', 10, [step('B'), step('C')])]; // 1 + 20 = 21
      expect(() => normalizeDefinition(definition, { ...checks, maxStepExecutions: 21 })).not.toThrow();
      expect(() => normalizeDefinition(definition, { ...checks, maxStepExecutions: 20 })).toThrow(/up to 21 steps/);
    });
  });

  describe('humanReview matrix', () => {
    it('rejects any humanReview on parallel nodes', () => {
      const problems = problemsOf([{ name: 'P', nodeType: 'parallel', children: [step('A'), step('B')], humanReview: { requiresConfirmation: true } }]);
      expect(problems[0]).toContain('parallel nodes do not support humanReview');
    });

    it.each([
      ['requiresUserInput', 'loop'],
      ['requiresOutputReview', 'condition'],
      ['requiresIterationReview', 'step'],
    ] as const)('rejects %s on %s nodes', (field, nodeType) => {
      const base: Record<string, WorkflowNodeInput> = {
        loop: { name: 'N', nodeType: 'loop', loopConfig: { maxIterations: 1 }, children: [step('X')] },
        condition: { name: 'N', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('X')] },
        step: step('N'),
      };
      const problems = problemsOf([{ ...base[nodeType]!, humanReview: { [field]: true } }]);
      expect(problems[0]).toContain(`humanReview.${field} is not supported on ${nodeType} nodes`);
    });

    it('allows else_branch only on conditions', () => {
      expect(problemsOf([step('S', { humanReview: { requiresConfirmation: true, onReject: 'else_branch' } })])[0]).toContain('only valid on condition nodes');
      const [node] = normalizeDefinition(
        [{ name: 'C', nodeType: 'condition', conditionCel: 'true', trueSteps: [step('T')], humanReview: { requiresConfirmation: true, onReject: 'else_branch' } }],
        checks,
      );
      expect(node!.humanReview).toMatchObject({ requiresConfirmation: true, onReject: 'else_branch', onTimeout: 'cancel', timeoutSeconds: null });
    });

    it('needs a userInputSchema for step user input, with unique field names', () => {
      expect(problemsOf([step('S', { humanReview: { requiresUserInput: true } })])[0]).toContain('needs a non-empty userInputSchema');
      const problems = problemsOf([
        step('S', {
          humanReview: {
            requiresUserInput: true,
            userInputSchema: [
              { name: 'a', fieldType: 'string' },
              { name: 'a', fieldType: 'number' },
            ],
          },
        }),
      ]);
      expect(problems[0]).toContain("lists field 'a' twice");
    });

    it('lets a router whose route a human picks omit conditionCel', () => {
      const [node] = normalizeDefinition(
        [{ name: 'R', nodeType: 'router', humanReview: { requiresUserInput: true }, choices: [{ name: 'a', steps: [step('A')] }, { name: 'b', steps: [step('B')] }] }],
        checks,
      );
      expect(node!.conditionCel).toBeNull();
    });
  });
});

describe('normalizeCanvas', () => {
  it('defaults x, y and zoom', () => {
    expect(normalizeCanvas({ viewport: {} })).toEqual({ viewport: { x: 0, y: 0, zoom: 1 } });
  });

  it('rejects a zoom that is not positive', () => {
    expect(() => normalizeCanvas({ viewport: { zoom: 0 } })).toThrow('zoom must be > 0');
  });
});

describe('normalizeTags', () => {
  it('drops duplicates, keeping the first occurrence first, and makes absent tags []', () => {
    expect(normalizeTags(['b', 'a', 'b', 'team:x', 'a'])).toEqual(['b', 'a', 'team:x']);
    expect(normalizeTags(undefined)).toEqual([]);
    expect(normalizeTags([])).toEqual([]);
  });

  it('compares exactly: case and spaces make different tags', () => {
    expect(normalizeTags(['Ops', 'ops', 'ops '])).toEqual(['Ops', 'ops', 'ops ']);
  });
});
