import { InvalidInputError } from '../core/errors';
import { parseDeploymentRequest } from '../core/group-deployment/deployment-request';
import { parseUpgradeRequest, unsupportedControls } from '../core/rolling-upgrade/upgrade-request';
import { buildEnvironmentUpgradeReport, summarizeEnvironmentUpgrade } from '../engine/reports/environment-upgrade-report';
import type { EnvironmentUpgradeStore } from '../ports/environment-upgrade-store';
import type { ApiControlPlane } from './control-plane';
import { json } from './http';
import { problem, readJsonObject } from './problems';
import type { Route } from './router';

/**
 * Upgrade sessions with CRUS's semantics (list, create 201, get 404, delete 200 by the CRUS deletion
 * rules through the facade's cancel), and group deployments the same way under /deployments. The
 * side-by-side environment upgrades (POST /environments/{id}/upgrade) are sessions too: listed, read
 * and deleted here.
 */
export function sessionRoutes(controlPlane: ApiControlPlane, environmentUpgrades: EnvironmentUpgradeStore): Route[] {
  const upgrade = async (id: string) => {
    const view = await controlPlane.session(id);
    return view?.kind === 'upgrade' ? view.report : undefined;
  };
  const environmentUpgrade = async (id: string) => (await environmentUpgrades.getUpgrade(id))?.session;
  const deployment = async (id: string) => {
    const view = await controlPlane.session(id);
    return view?.kind === 'deployment' ? view.report : undefined;
  };
  return [
    {
      pattern: '/sessions',
      invalidStatus: 422,
      methods: {
        GET: async () => {
          const [listed, environmentUpgradeSessions] = await Promise.all([controlPlane.sessions(), environmentUpgrades.listUpgrades()]);
          const all = [
            ...listed.flatMap((entry) => (entry.kind === 'upgrade' ? [entry.session] : [])),
            ...environmentUpgradeSessions.map(summarizeEnvironmentUpgrade),
          ];
          // Newest first, as each store lists them; ISO timestamps sort as text.
          return json(200, all.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0)));
        },
        POST: async (_params, request) => {
          const body = readJsonObject(request.body);
          // Checked here, before anything starts, so that the client gets the 422 naming the fields.
          const problems = unsupportedControls(parseUpgradeRequest(body));
          if (problems.length > 0) throw new InvalidInputError('upgrade request', problems);
          const started = await controlPlane.run('rollingUpgrade', body);
          return json(201, { id: started.id, kind: started.kind, executionArn: started.executionArn }, { location: `/sessions/${encodeURIComponent(started.id)}` });
        },
      },
    },
    {
      pattern: '/sessions/{id}',
      invalidStatus: 422,
      methods: {
        GET: async ({ id }) => {
          const report = await upgrade(id!);
          if (report) return json(200, report);
          const environment = await environmentUpgrade(id!);
          return environment ? json(200, await buildEnvironmentUpgradeReport(controlPlane, environment)) : problem(404, `no session with id '${id}'`);
        },
        DELETE: async ({ id }) => {
          if (await upgrade(id!)) return json(200, await controlPlane.cancel(id!));
          if (!(await environmentUpgrade(id!))) return problem(404, `no session with id '${id}'`);
          // The workflow passes the deletion on to the rolling upgrade it runs (the CRUS deletion rules), or stops before the next phase.
          const cancelled = await environmentUpgrades.requestCancel(id!);
          return json(200, { id: id!, kind: 'environment-upgrade', state: cancelled.state, running: true });
        },
      },
    },
    {
      pattern: '/deployments',
      invalidStatus: 422,
      methods: {
        GET: async () => json(200, (await controlPlane.sessions()).flatMap((listed) => (listed.kind === 'deployment' ? [summary(listed.deployment)] : []))),
        POST: async (_params, request) => {
          const body = readJsonObject(request.body);
          parseDeploymentRequest(body);
          const started = await controlPlane.run('groupDeployment', body);
          return json(201, { id: started.id, kind: started.kind, executionArn: started.executionArn }, { location: `/deployments/${encodeURIComponent(started.id)}` });
        },
      },
    },
    {
      pattern: '/deployments/{id}',
      invalidStatus: 422,
      methods: {
        GET: async ({ id }) => {
          const report = await deployment(id!);
          return report ? json(200, report) : problem(404, `no deployment with id '${id}'`);
        },
        // The facade refuses it (CancelNotSupportedError, a 405) until deployments have a cancel request.
        DELETE: async ({ id }) => {
          if (!(await deployment(id!))) return problem(404, `no deployment with id '${id}'`);
          return json(200, await controlPlane.cancel(id!));
        },
      },
    },
  ];
}

/** A deployment record without its run state (the report has it, per group and node). */
function summary<T extends { state: unknown }>(record: T): Omit<T, 'state'> {
  const { state: _state, ...rest } = record;
  return rest;
}
