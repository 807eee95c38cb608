import { InvalidInputError, SessionGateError, SessionNotFoundError } from '../core/errors';
import { parseDeploymentStrategy, planDeployment, selectDeploymentStrategy } from '../core/group-deployment';
import { parseDeploymentRequest } from '../core/group-deployment/deployment-request';
import { upgradeHasEnded } from '../core/environments';
import { isSessionCancellable, isSessionEnded } from '../core/rolling-upgrade/session';
import { buildEnvironmentUpgradeReport, summarizeEnvironmentUpgrade } from '../control-plane/reports/environment-upgrade-report';
import { checkUpgradeRequestOnSite, readUpgradeRequest } from '../control-plane/request-checks/upgrade-request';
import { sessionReportJson } from '../control-plane/reports/session-report';
import { recordJson } from '../control-plane/reports/view-json';
import { checkUpgradeGroups } from '../control-plane/request-checks/upgrade-groups';
import type { RunStart } from '../ports/run-start-store';
import type { ApiDependencies } from './dependencies';
import { json } from './http';
import { problem, readJsonObject } from './problems';
import type { Route, RouteHandler } from './router';
import { resumeRoute, runLocation, startedRecord, startRecords, stopRoute } from './run-routes';
import { unlessSiteFails } from './site-checks';

/**
 * Upgrade sessions with CRUS's semantics (list, create 201, get 404, delete 200 by the CRUS deletion
 * rules through the facade's cancel), and group deployments the same way under /deployments (delete:
 * 200 CANCELLING, the workflow ends it CANCELLED). The side-by-side environment upgrades (POST
 * /environments/{id}/upgrade) are sessions too: listed, read and deleted here.
 */
export function sessionRoutes(deps: ApiDependencies): Route[] {
  const runs = runLookups(deps);
  return [...upgradeSessionRoutes(deps, runs), ...deploymentRoutes(deps, runs)];
}

/** How the routes find a run by its id: its report by kind, an environment upgrade, a start not recorded yet. */
function runLookups(deps: ApiDependencies) {
  const { controlPlane, environmentUpgrades } = deps;
  return {
    ...startRecords(deps),
    upgrade: async (id: string) => {
      const view = await controlPlane.session(id);
      return view?.kind === 'upgrade' ? view.report : undefined;
    },
    deployment: async (id: string) => {
      const view = await controlPlane.session(id);
      return view?.kind === 'deployment' ? view.report : undefined;
    },
    environmentUpgrade: async (id: string) => (await environmentUpgrades.getUpgrade(id))?.session,
  };
}
type RunLookups = ReturnType<typeof runLookups>;

function upgradeSessionRoutes(deps: ApiDependencies, runs: RunLookups): Route[] {
  const { controlPlane } = deps;
  return [
    { pattern: '/sessions', invalidStatus: 422, methods: { GET: listSessions(deps), POST: startUpgrade(deps, runs) } },
    { pattern: '/sessions/{id}', invalidStatus: 422, methods: { GET: getSession(deps, runs), DELETE: deleteSession(deps, runs) } },
    ...(['approve', 'pause', 'unpause'] as const).map(
      (action): Route => ({
        pattern: `/sessions/{id}/${action}`,
        invalidStatus: 422,
        methods: {
          // The operator's gates of a window (`rollout session approve|pause|resume`): stored on the session, and the
          // workflow parked for its operator is woken. 409 for a session that cannot take it now (not a window, ended...).
          POST: async ({ id }) => {
            try {
              return json(200, await controlPlane.gate(id!, action));
            } catch (err) {
              if (err instanceof SessionNotFoundError) return problem(404, `no session with id '${id}'`);
              if (err instanceof SessionGateError) return problem(409, err.message);
              throw err;
            }
          },
        },
      }),
    ),
    resumeRoute(deps, 'upgrade'),
    // Stop, beside DELETE's cancel: what is in flight finishes, nothing new starts, the rest is left as it was; STOPPED, then resumable.
    stopRoute(deps, 'upgrade'),
  ];
}

function listSessions({ controlPlane, environmentUpgrades }: ApiDependencies): RouteHandler {
  return async () => {
    const [listed, environmentUpgradeSessions] = await Promise.all([controlPlane.sessions(), environmentUpgrades.listUpgrades()]);
    const all = [
      ...listed.flatMap((entry) => (entry.kind === 'upgrade' ? [entry.session] : [])),
      ...environmentUpgradeSessions.map(summarizeEnvironmentUpgrade),
    ];
    // Newest first, as each store lists them; ISO timestamps sort as text. Simulated instants are shown as such, not dates.
    return json(200, all.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)).map(recordJson));
  };
}

function startUpgrade({ controlPlane, site }: ApiDependencies, { accepted }: RunLookups): RouteHandler {
  return async (_params, { body: text }) => {
    const { waitForGroups, ...body } = readJsonObject(text);
    if (waitForGroups !== undefined && typeof waitForGroups !== 'boolean')
      throw new InvalidInputError('upgrade request', [{ field: 'waitForGroups', message: 'waitForGroups must be true or false' }]);
    // Read once, here, before anything starts, so that the client gets the 422 naming the fields.
    const upgrade = readUpgradeRequest(body);
    // What Open Session checks on the site (the boot template), checked here too when the site answers; and, as the CLI
    // does, the groups the labels name: the workflow waits for a missing group (CRUS), so a typo would wait for ever.
    await unlessSiteFails(site && (() => checkUpgradeRequestOnSite(upgrade, site)));
    await unlessSiteFails(site && (() => checkUpgradeGroups(site.inventory, upgrade, waitForGroups === true)));
    const run = await controlPlane.run('rollingUpgrade', body);
    await accepted(run, 'upgrade');
    return json(201, { id: run.id, kind: run.kind, executionArn: run.executionArn }, { location: runLocation('upgrade', run.id) });
  };
}

function getSession({ controlPlane }: ApiDependencies, { upgrade, environmentUpgrade, started }: RunLookups): RouteHandler {
  return async ({ id }) => {
    const report = await upgrade(id!);
    // An ended session removed while its report was read (its item goes first, then its nodes): gone, not half a report.
    if (report && (!isSessionEnded(report.state) || (await controlPlane.status(id!)))) return json(200, sessionReportJson(report));
    if (report) return problem(404, `no session with id '${id}'`);
    const environment = await environmentUpgrade(id!);
    if (environment) return json(200, recordJson(await buildEnvironmentUpgradeReport(controlPlane, environment)));
    const start = await started(id!, 'upgrade');
    return start ? json(200, startedSession(start)) : problem(404, `no session with id '${id}'`);
  };
}

/**
 * CRUS: a running session turns DELETING (the workflow applies the deletion rules, then keeps it
 * as DELETED, readable); one that has ended is removed. A session being deleted is a 409. Its state is read
 * from its record alone (one read): a DELETE needs no report.
 */
function deleteSession({ controlPlane, environmentUpgrades, runStarts }: ApiDependencies, { environmentUpgrade, started }: RunLookups): RouteHandler {
  return async ({ id }) => {
    const removed = (kind: string, state: string) => json(200, { id: id!, kind, state, running: false, removed: true });
    const status = await controlPlane.status(id!);
    if (status?.kind === 'upgrade') {
      // A stopped session turns DELETING too; nothing runs it, so its resume applies the deletion rules (running: false says so).
      if (isSessionCancellable(status.state)) return json(200, await controlPlane.cancel(id!));
      if (status.state === 'DELETING') return problem(409, `session ${id} is being deleted: it is removed by a DELETE once it has ended`);
      // An environment upgrade still running reads its rolling upgrades' sessions to finish (which nodes move).
      const parent = (await environmentUpgrades.listUpgrades()).find(
        (upgrade) => !upgradeHasEnded(upgrade) && [upgrade.progress.controllers, upgrade.progress.nodes].some((child) => child?.upgradeId === id),
      );
      if (parent)
        return problem(
          409,
          `session ${id} is a rolling upgrade of environment upgrade ${parent.upgradeId}, which is still running and reads it: delete it once that has ended`,
        );
      // Its start record goes first: after the session, it would answer PENDING to a read in between.
      await runStarts.remove(id!);
      const { state } = await controlPlane.removeSession(id!);
      return removed('upgrade', state);
    }
    const environment = await environmentUpgrade(id!);
    if (environment) {
      if (upgradeHasEnded(environment)) {
        await environmentUpgrades.deleteUpgrade(id!);
        return removed('environment-upgrade', environment.state);
      }
      if (environment.state === 'DELETING') return problem(409, `environment upgrade ${id} is being deleted`);
      // The workflow passes the deletion on to the rolling upgrade it runs (the CRUS deletion rules), or stops before the next phase.
      const cancelled = await environmentUpgrades.requestCancel(id!);
      return json(200, { id: id!, kind: 'environment-upgrade', state: cancelled.state, running: true });
    }
    const start = await started(id!, 'upgrade');
    if (!start) return problem(404, `no session with id '${id}'`);
    if (!start.refused) return problem(409, `session ${id} is starting: ask again once it has opened`);
    await runStarts.remove(id!);
    return removed('upgrade', 'REFUSED');
  };
}

function deploymentRoutes(deps: ApiDependencies, runs: RunLookups): Route[] {
  const { controlPlane } = deps;
  return [
    resumeRoute(deps, 'deployment'),
    stopRoute(deps, 'deployment'),
    {
      pattern: '/deployments',
      invalidStatus: 422,
      methods: {
        GET: async () =>
          json(
            200,
            (await controlPlane.sessions()).flatMap((listed) => (listed.kind === 'deployment' ? [recordJson(summary(listed.deployment))] : [])),
          ),
        POST: startDeployment(deps, runs),
      },
    },
    { pattern: '/deployments/{id}', invalidStatus: 422, methods: { GET: getDeployment(runs), DELETE: deleteDeployment(deps, runs) } },
  ];
}

function startDeployment({ controlPlane, site }: ApiDependencies, { accepted }: RunLookups): RouteHandler {
  return async (_params, request) => {
    const body = readJsonObject(request.body);
    const parsed = parseDeploymentRequest(body);
    // What Start Deployment refuses: the strategy's own problems (unknown, duplicate or cyclic groups) from the
    // request alone; unknown nodes and critical groups selecting none from the inventory, when the site answers.
    // The strategy is read once: the site check plans the one read here.
    const strategy = inStrategyField(() => (parsed.strategy === undefined ? undefined : parseDeploymentStrategy(parsed.strategy)));
    await unlessSiteFails(
      site &&
        (async () => {
          const inventory = await site.inventory.listNodes();
          inStrategyField(() => planDeployment(strategy ?? selectDeploymentStrategy(parsed, inventory), inventory));
        }),
    );
    const run = await controlPlane.run('groupDeployment', body);
    await accepted(run, 'deployment');
    return json(201, { id: run.id, kind: run.kind, executionArn: run.executionArn }, { location: runLocation('deployment', run.id) });
  };
}

function getDeployment({ deployment, started }: RunLookups): RouteHandler {
  return async ({ id }) => {
    const report = await deployment(id!);
    if (report) return json(200, report);
    const start = await started(id!, 'deployment');
    return start ? json(200, startedDeployment(start)) : problem(404, `no deployment with id '${id}'`);
  };
}

/**
 * As /sessions/{id}: a running deployment is cancelled (CANCELLING, the workflow ends it CANCELLED); one that has
 * ended is removed; one being cancelled is a 409 until it has ended. Its status is read from its record alone (one read).
 */
function deleteDeployment({ controlPlane, runStarts }: ApiDependencies, { started }: RunLookups): RouteHandler {
  return async ({ id }) => {
    const status = await controlPlane.status(id!);
    if (status?.kind === 'deployment') {
      if (status.state === 'RUNNING') return json(200, await controlPlane.cancel(id!));
      if (status.state === 'CANCELLING') return problem(409, `deployment ${id} is being cancelled: it is removed by a DELETE once it has ended`);
      const removed = await controlPlane.removeDeployment(id!);
      await runStarts.remove(id!);
      return json(200, { id: id!, kind: 'deployment', state: removed.status, running: false, removed: true });
    }
    const start = await started(id!, 'deployment');
    if (!start) return problem(404, `no deployment with id '${id}'`);
    if (!start.refused) return problem(409, `deployment ${id} is starting: ask again once it has started`);
    await runStarts.remove(id!);
    return json(200, { id: id!, kind: 'deployment', state: 'REFUSED', running: false, removed: true });
  };
}

/** A deployment record without its run state (the report has it, per group and node). */
function summary<T extends { state: unknown }>(record: T): Omit<T, 'state'> {
  const { state: _state, ...rest } = record;
  return rest;
}

/** A strategy's problems named under the request's `strategy` field (node problems keep `nodes[i]`). */
function inStrategyField<T>(check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (!(err instanceof InvalidInputError) || err.subject !== 'deployment strategy') throw err;
    throw new InvalidInputError(
      'deployment request',
      err.problems.map((p) => ({ ...p, field: p.field ? `strategy.${p.field}` : 'strategy' })),
    );
  }
}

/** A session not opened yet (PENDING), or refused by Open Session (REFUSED: `refused` says why, nothing was touched). */
function startedSession(start: RunStart) {
  return {
    upgradeId: start.id,
    kind: 'ComputeUpgradeSession',
    state: start.refused ? 'REFUSED' : 'PENDING',
    completed: false,
    ...startedRecord(start, 'Upgrade session refused'),
  };
}

/** A deployment not started yet (PENDING), or refused by Start Deployment (REFUSED). */
function startedDeployment(start: RunStart) {
  return { deploymentId: start.id, status: start.refused ? 'REFUSED' : 'PENDING', ...startedRecord(start, 'Deployment refused') };
}
