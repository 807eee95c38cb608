/** Environment variables the deployed functions read; the CDK stack sets them. */
export const ENVIRONMENT = {
  tableName: 'TABLE_NAME',
  workloadManagerUrl: 'WORKLOAD_MANAGER_URL',
  slurmApiVersion: 'SLURM_API_VERSION',
  slurmUserName: 'SLURM_USER_NAME',
  slurmToken: 'SLURM_TOKEN',
  /** ARN of the secret holding the Slurm JWT; read at cold start into SLURM_TOKEN's place (the stack sets this, never the token). */
  slurmTokenSecretArn: 'SLURM_TOKEN_SECRET_ARN',
  bootServiceUrl: 'BOOT_SERVICE_URL',
  inventoryUrl: 'INVENTORY_URL',
  /** Slurm's node names from HSM's NID: a pattern such as CSM's `nid{nid:06}` (the default), or `same` where Slurm uses HSM's names. */
  nodeNames: 'NODE_NAMES',
  provisionerUrl: 'PROVISIONER_URL',
  /** Bearer token for BOS, HSM and the provisioner; empty or unset: requests go without one. */
  siteApiToken: 'SITE_API_TOKEN',
  /** ARN of the secret holding SITE_API_TOKEN's value; empty or unset: no secret. Read at cold start. */
  siteApiTokenSecretArn: 'SITE_API_TOKEN_SECRET_ARN',
  iterationsPerExecution: 'ITERATIONS_PER_EXECUTION',
  /** The site connection profile as JSON; when set, the URL and token variables above are not read. Secrets stay ARNs until cold start. */
  siteProfile: 'SITE_PROFILE',
  /** The REST API's function starts the workflows by these ARNs. */
  rollingUpgradeStateMachineArn: 'ROLLING_UPGRADE_STATE_MACHINE_ARN',
  groupDeploymentStateMachineArn: 'GROUP_DEPLOYMENT_STATE_MACHINE_ARN',
  /** The REST API's function does not start task runs, but stops and cancels them: it lists this machine's executions. */
  taskGraphStateMachineArn: 'TASK_GRAPH_STATE_MACHINE_ARN',
  /** 'true' only in a lab stack: the site URLs may be http:// although tokens travel over them. */
  allowInsecureHttp: 'ALLOW_INSECURE_HTTP',
  environmentUpgradeStateMachineArn: 'ENVIRONMENT_UPGRADE_STATE_MACHINE_ARN',
  /** The EventBridge bus of the status events; unset: no events. */
  eventBusName: 'EVENT_BUS_NAME',
} as const;

/**
 * Log lines the stack turns into metrics (metric filters on the functions' log groups, matched on the
 * JSON log's `message`): a status event the bus refused, after the publisher's own retry.
 */
export const LOG_MESSAGES = {
  statusEventsNotPublished: 'status events not published',
} as const;
