import type { FunctionName } from './functions';

/**
 * The site's services as the functions reach them (ports/site.ts, ports/provisioner.ts): `commands` is
 * the head node's command transport as health checks and task-graph commands use it directly (a
 * command-driven connector's own use of its transport counts as that connector's).
 */
export type SiteService = 'workloadManager' | 'bootService' | 'inventory' | 'provisioner' | 'commands';

/** Every increment of a rolling-upgrade stage may drain, boot, edit groups, check health and resume or fail nodes. */
const ROLLING_UPGRADE_STAGE: readonly SiteService[] = ['workloadManager', 'bootService', 'inventory', 'commands'];

/**
 * The site services each function calls, and so the secrets it reads and the SSM targets it commands:
 * the stack grants each exactly those of its services (infra/constructs/site-connection.ts), and the
 * functions read a secret when its connector is first used, not when it is built, so that one never
 * reads a secret it was not granted. test/workflows/table-access.test.ts holds the functions to this
 * table in runs of every workflow.
 */
export const SITE_SERVICES: Readonly<Record<FunctionName | 'Api', readonly SiteService[]>> = {
  // The boot template must exist, and the labels name groups of the inventory (Open Session's checks).
  OpenSession: ['bootService', 'inventory'],
  StartStep: ROLLING_UPGRADE_STAGE,
  CheckQuiesce: ROLLING_UPGRADE_STAGE,
  BootStep: ROLLING_UPGRADE_STAGE,
  CheckBoot: ROLLING_UPGRADE_STAGE,
  EvaluateBoot: ROLLING_UPGRADE_STAGE,
  CheckReturnToService: ROLLING_UPGRADE_STAGE,
  AdvanceWindow: ROLLING_UPGRADE_STAGE,
  CancelSession: ROLLING_UPGRADE_STAGE,
  CleanUp: ROLLING_UPGRADE_STAGE,
  // Parks the execution on a task token: the table only.
  AwaitOperator: [],
  // A failed execution clears its session's Slurm triggers: strigger, on the head node's transport.
  ReleaseSiteTriggers: ['workloadManager', 'commands'],
  // The inventory's nodes for the plan; the others work on the stored run, and the batches on the provisioner.
  StartDeployment: ['inventory'],
  PickReadyGroups: [],
  PlanPhase: [],
  // The provisioner; Slurm's reasons show which nodes another control plane's run claims (left out of the batch).
  StartBatch: ['provisioner', 'workloadManager'],
  CheckBatch: ['provisioner', 'workloadManager'],
  EvaluatePhase: [],
  FailGroup: [],
  FinishDeployment: [],
  FailDeployment: [],
  // Plans over the inventory's nodes; a pass runs drain, resume and reboot tasks and commands on the nodes.
  OpenTaskRun: ['inventory'],
  AdvanceTaskRun: ['workloadManager', 'bootService', 'inventory', 'commands'],
  // Checks the release's boot template and the nodes and groups; sets the starting group of each rolling upgrade it starts.
  OpenEnvironmentUpgrade: ['bootService', 'inventory'],
  CloneSeed: [],
  AssignControllers: [],
  PrepareRollingUpgrade: ['inventory'],
  FollowRollingUpgrade: [],
  FailEnvironmentUpgrade: [],
  // Checks requests against the boot service and the inventory before it answers.
  Api: ['bootService', 'inventory'],
};
