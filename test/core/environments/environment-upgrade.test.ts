import {
  childExecutionName,
  childUpgradeRequest,
  executionArnOf,
  parseEnvironmentUpgradeRequest,
  phaseBackoffSeconds,
  planEnvironmentUpgrade,
  siteProblems,
  withMessages,
  MAX_UPGRADE_MESSAGES,
  type Environment,
  type EnvironmentUpgradeSession,
} from '../../../core/environments';
import { buildCloudSite, environmentUpgradeRequest } from '../../support/environments';

const site = buildCloudSite();
const cloud = site.environments.find((e) => e.id === 5)!;
const release = (id: number) => site.releases.find((r) => r.id === id)!;
const plan = (overrides: Record<string, unknown> = {}, rolling: Record<string, unknown> = {}, seed?: Environment) =>
  planEnvironmentUpgrade(parseEnvironmentUpgradeRequest(environmentUpgradeRequest(overrides, rolling)), cloud, seed, release(2));

describe('planEnvironmentUpgrade', () => {
  it('clones on the target release, takes the controllers by role and the rest for the rolling upgrade with the release template', () => {
    const planned = plan();
    expect(planned.seedDraft).toMatchObject({ name: 'cloud-8.0', release_id: 2, original_cluster_id: 5, nodes: [] });
    expect(planned.controllers.map((n) => n.name)).toEqual(['ctl-1', 'ctl-2']);
    expect(planned.others.map((n) => n.name)).toEqual(['cmp-1', 'cmp-2', 'cmp-3']);
    expect(planned.rollingUpgrade).toMatchObject({ startingLabel: 'cloud-nodes', upgradeStepSize: 2, upgradeTemplateId: 'img-2', mode: 'lockstep' });
  });

  it('with a seed already: no clone, its release, its controllers counted; a different release_id is refused', () => {
    const seed: Environment = { ...plan().seedDraft!, id: 9, nodes: [cloud.nodes[0]!] };
    const original = { ...cloud, nodes: cloud.nodes.slice(1) };
    const planned = planEnvironmentUpgrade(
      parseEnvironmentUpgradeRequest(environmentUpgradeRequest({ name: undefined, release_id: undefined })),
      original,
      seed,
      release(2),
    );
    expect(planned.seedDraft).toBeUndefined();
    expect(planned.controllers.map((n) => n.id)).toEqual([51, 52]);
    expect(() => planEnvironmentUpgrade(parseEnvironmentUpgradeRequest(environmentUpgradeRequest({ release_id: 1 })), original, seed, release(2))).toThrow(
      expect.objectContaining({ problems: [{ field: 'release_id', message: 'environment 5 already has upgrade seed 9 on release 2' }] }),
    );
  });

  it("names every bad field at once, the rolling upgrade's under rolling_upgrade", () => {
    expect(() => plan({ name: undefined, controller_roles: ['nova'] }, { upgradeStepSize: 0, mode: 'sideways' })).toThrow(
      expect.objectContaining({
        name: 'InvalidInputError',
        problems: expect.arrayContaining([
          expect.objectContaining({ field: 'name' }),
          expect.objectContaining({ field: 'controller_roles' }),
          expect.objectContaining({ field: 'rolling_upgrade.upgradeStepSize' }),
          expect.objectContaining({ field: 'rolling_upgrade.mode' }),
        ]),
      }),
    );
    expect(() => parseEnvironmentUpgradeRequest({ rolling_upgrade: {}, colour: 'red' })).toThrow(
      expect.objectContaining({ problems: [expect.objectContaining({ field: 'colour' })] }),
    );
  });

  it('refuses a seed (405) and a node role the release does not define (409)', () => {
    expect(() =>
      planEnvironmentUpgrade(parseEnvironmentUpgradeRequest(environmentUpgradeRequest()), { ...cloud, original_cluster_id: 1 }, undefined, release(2)),
    ).toThrow(expect.objectContaining({ name: 'UpgradeNotAllowedError' }));
    const mongo = { ...cloud, nodes: [...cloud.nodes, { id: 56, name: 'mdb-1', roles: ['mongo'], ip: '10.30.0.56', mac: '52:54:00:00:01:56' }] };
    expect(() => planEnvironmentUpgrade(parseEnvironmentUpgradeRequest(environmentUpgradeRequest()), mongo, undefined, release(2))).toThrow(
      expect.objectContaining({
        name: 'UpgradeConflictError',
        problems: [{ field: 'nodes', message: "role 'mongo' of node 56 (mdb-1) is not defined in release 2 (Liberty on Ubuntu 14.04 liberty-8.0)" }],
      }),
    );
  });

  it('refuses a release that is not newer than the environment runs (a 422 naming release_id), as the clone does', () => {
    const onRelease2 = { ...cloud, release_id: 2 };
    expect(() => planEnvironmentUpgrade(parseEnvironmentUpgradeRequest(environmentUpgradeRequest()), onRelease2, undefined, release(2), release(2))).toThrow(
      expect.objectContaining({ name: 'InvalidInputError', problems: [expect.objectContaining({ field: 'release_id' })] }),
    );
    expect(plan().seedDraft).toMatchObject({ release_id: 2 });
  });
});

describe('siteProblems', () => {
  const names = new Set(cloud.nodes.map((n) => n.name));
  it("names the template, every node the site lacks, every missing group and a starting group holding another's node", () => {
    const problems = siteProblems(plan(), {
      templateExists: false,
      siteNodes: new Set([...names].filter((n) => n !== 'cmp-3')),
      groups: { 'cloud-nodes': ['ctl-1', 'other'], upgrading: undefined, failed: [] },
    });
    expect(problems).toEqual([
      { field: 'release_id', message: "release 2's bootTemplate 'img-2' does not exist in the boot service" },
      { field: 'nodes', message: "node 55 'cmp-3' of the environment is not a node of the site" },
      { field: 'rolling_upgrade.upgradingLabel', message: "group 'upgrading' does not exist" },
      { field: 'rolling_upgrade.startingLabel', message: expect.stringContaining("group 'cloud-nodes' holds nodes outside environment 5 (other)") },
    ]);
    expect(siteProblems(plan(), { templateExists: true, siteNodes: names, groups: { 'cloud-nodes': ['cmp-1'], upgrading: [], failed: ['x'] } })).toEqual([]);
  });
});

describe('the child rolling upgrades', () => {
  it('runs the controllers in one lock-step step with the labels and timeouts of the request, the others as asked', () => {
    const planned = plan({}, { mode: 'window', maxUnavailable: 1, bootTimeoutSeconds: 900 });
    expect(childUpgradeRequest(planned, 'CONTROLLERS', 2)).toMatchObject({
      mode: 'lockstep',
      upgradeStepSize: 2,
      bootTimeoutSeconds: 900,
      startingLabel: 'cloud-nodes',
      upgradeTemplateId: 'img-2',
    });
    expect(childUpgradeRequest(planned, 'CONTROLLERS', 2)).not.toHaveProperty('maxUnavailable');
    expect(childUpgradeRequest(planned, 'NODES', 3)).toBe(planned.rollingUpgrade);
  });

  it('names each child after the session and phase, with the ARN Step Functions gives it', () => {
    expect(childExecutionName('u-1', 'CONTROLLERS')).toBe('u-1-controllers');
    expect(executionArnOf('arn:aws:states:eu-west-1:123456789012:stateMachine:S-RollingUpgrade', 'u-1-nodes')).toBe(
      'arn:aws:states:eu-west-1:123456789012:execution:S-RollingUpgrade:u-1-nodes',
    );
    expect(() => executionArnOf('arn:aws:lambda:x', 'n')).toThrow('not a state machine ARN');
  });
});

describe('session bookkeeping', () => {
  it('keeps the newest messages only, and backs off doubling to 5 minutes', () => {
    const session = { messages: [] } as unknown as EnvironmentUpgradeSession;
    const many = withMessages(session, ...Array.from({ length: MAX_UPGRADE_MESSAGES + 5 }, (_, i) => `m${i}`));
    expect(many.messages).toHaveLength(MAX_UPGRADE_MESSAGES);
    expect(many.messages[0]).toBe('m5');
    expect([0, 1, 2, 5, 20].map((n) => phaseBackoffSeconds(30, n))).toEqual([30, 60, 120, 300, 300]);
  });
});
