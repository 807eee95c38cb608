import { DynamoDbDeploymentStore } from '../../adapters/dynamodb/dynamodb-deployment-store';
import { DynamoDbTaskRunStore } from '../../adapters/dynamodb/dynamodb-task-run-store';
import { DynamoDbNodeLocks } from '../../adapters/dynamodb/node-locks';
import type { LocalDynamoDb } from '../../local/local-dynamodb';
import type { TaskType } from '../../core/task-graph';
import { defaultTaskGraphSettings, type TaskGraphDependencies } from '../../lambdas/activities/task-graph/dependencies';
import type { InventoryNode } from '../../ports/site';
import type { RunningTask, TaskExecution, TaskExecutor, TaskInvocation, TaskOutcome } from '../../ports/task-executor';

/**
 * An executor standing in for the site: every task ends after `pollsToEnd` looks with the outcome
 * `outcomeOf` gives; it records every start, so a test sees a task started twice.
 */
export class FakeExecutor implements TaskExecutor {
  readonly starts: string[] = [];
  private readonly looks = new Map<string, number>();

  constructor(
    private readonly options: { pollsToEnd?: number; outcomeOf?: (invocation: TaskInvocation) => TaskOutcome; unsupported?: readonly TaskType[] } = {},
  ) {}

  unsupported(type: TaskType): string | undefined {
    return this.options.unsupported?.includes(type) ? 'not on this fake site' : undefined;
  }

  async start(invocations: readonly TaskInvocation[]): Promise<Map<string, TaskExecution>> {
    for (const invocation of invocations) this.starts.push(invocation.op);
    return new Map(invocations.map((invocation) => [invocation.op, { fake: invocation.name }]));
  }

  async poll(running: readonly RunningTask[]): Promise<Map<string, { outcome?: TaskOutcome }>> {
    const seen = new Map<string, { outcome?: TaskOutcome }>();
    for (const { invocation } of running) {
      const looks = (this.looks.get(invocation.op) ?? 0) + 1;
      this.looks.set(invocation.op, looks);
      if (looks >= (this.options.pollsToEnd ?? 1)) seen.set(invocation.op, { outcome: this.options.outcomeOf?.(invocation) ?? { result: 'ok' } });
    }
    return seen;
  }
}

/** Task-graph dependencies over a local DynamoDB, with the given nodes as the inventory and a clock the test moves. */
export function taskGraphDeps(db: LocalDynamoDb, nodes: readonly InventoryNode[], executor: TaskExecutor, clock = { now: () => 0 }): TaskGraphDependencies {
  const { tableName, client } = db;
  return {
    store: new DynamoDbTaskRunStore({ tableName, client }),
    deployments: new DynamoDbDeploymentStore({ tableName, client }),
    inventory: { listNodes: async () => [...nodes] } as TaskGraphDependencies['inventory'],
    locks: new DynamoDbNodeLocks({ tableName, client, clock }),
    // Nodes unknown to this workload manager carry no claim; nothing drained, nothing to lift.
    workloadManager: { getNodes: async () => new Map(), resumeNodes: async () => undefined },
    executor,
    clock,
    settings: { ...defaultTaskGraphSettings },
  };
}

/** Inventory nodes with deployment roles. */
export function inventoryNodes(
  roles: Record<string, readonly string[]>,
  gates: Record<string, Partial<Pick<InventoryNode, 'alive' | 'available'>>> = {},
): InventoryNode[] {
  return Object.entries(roles).map(([name, nodeRoles], i) => ({
    name,
    nid: i + 1,
    role: 'Compute',
    tags: [],
    labels: {},
    roles: [...nodeRoles],
    ...gates[name],
  }));
}
