import { performance } from 'node:perf_hooks';
import { EmbeddedRuntime } from '../local/embedded-runtime';
import { parseSiteDefinition } from '../simulator';
import { summarizeExecutions, type BenchFigures } from './figures';

export interface GroupDeploymentScenario {
  name: string;
  groups: number;
  nodesPerGroup: number;
  maxParallelGroups: number;
}

/**
 * One rack per group; group i depends on group (i-1)/2, a tree as deep as log2(groups); strategies
 * mix parallel-all, a window of 20 and one_by_one; every 97th node fails to prepare.
 */
function scenarioInput(s: GroupDeploymentScenario) {
  const nodes = [];
  for (let g = 0; g < s.groups; g++) {
    for (let n = 0; n < s.nodesPerGroup; n++) {
      const index = g * s.nodesPerGroup + n;
      nodes.push({
        name: `x${3000 + g}c0s${Math.floor(n / 2)}b0n${n % 2}`,
        nid: index + 1,
        rack: `x${3000 + g}`,
        tags: ['compute'],
        ...(index % 97 === 13 ? { faults: { prepare: 'fail' as const } } : {}),
      });
    }
  }
  const site = parseSiteDefinition({ nodes, timing: { prepareSeconds: 60, deploySeconds: 120 } });
  const strategy = {
    groups: Array.from({ length: s.groups }, (_, g) => ({
      name: `rack-${3000 + g}`,
      critical: g === 0,
      depends_on: g === 0 ? [] : [`rack-${3000 + Math.floor((g - 1) / 2)}`],
      selectors: [{ rack_names: [`x${3000 + g}`] }],
      success_criteria: { percent_successful_nodes: 90 },
      strategy: g % 10 === 9 ? { type: 'one_by_one' } : g % 2 === 0 ? { type: 'parallel' } : { type: 'parallel', amount: 20 },
    })),
  };
  return { site, input: { strategy, maxParallelGroups: s.maxParallelGroups, pollIntervalSeconds: 10 } };
}

export async function benchGroupDeployment(s: GroupDeploymentScenario): Promise<BenchFigures> {
  const { site, input } = scenarioInput(s);
  const runtime = await EmbeddedRuntime.start({ site }); // virtual time: makespans do not depend on the host
  try {
    const started = performance.now();
    const run = await runtime.run('groupDeployment', input);
    const outcome = await run.outcome;
    const wallSeconds = (performance.now() - started) / 1000;
    const record = await runtime.deployments.getDeployment(run.id);
    const stages = Object.values(record?.state.nodes ?? {});
    return {
      scenario: s.name,
      outcome: `${outcome.status}, ${stages.filter((x) => x === 'DEPLOYED').length} nodes deployed / ${stages.filter((x) => x === 'FAILED').length} failed`,
      nodes: s.groups * s.nodesPerGroup,
      wallSeconds,
      dynamoDbRequests: runtime.dynamoDbRequests.total,
      ...summarizeExecutions(runtime.engine.executions),
    };
  } finally {
    await runtime.close();
  }
}
