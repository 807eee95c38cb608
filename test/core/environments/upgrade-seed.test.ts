import {
  MASKED_VALUE,
  checkAssignment,
  checkSeedName,
  cloneEnvironment,
  isNewerRelease,
  maskEnvironment,
  releaseSchema,
  siteEnvironmentsSchema,
  upgradeAttributes,
  type Environment,
  type Release,
} from '../../../core/environments';
import { parseSiteDefinition } from '../../../simulator';
import { buildSiteWithEnvironments, fuelEnvironments } from '../../support/environments';
import { buildSite } from '../../support/sites';

const site = fuelEnvironments();
const release = (id: number): Release => site.releases.find((r) => r.id === id)!;
const environment = (id: number): Environment => site.environments.find((e) => e.id === id)!;

describe('upgrade seed clone', () => {
  it('copies editable and generated attributes upgraded by the target release, with no nodes and the original named', () => {
    const seed = cloneEnvironment(environment(1), release(2), { name: 'prod-8.0', release_id: 2 }, undefined);
    expect(seed).toEqual({
      name: 'prod-8.0',
      release_id: 2,
      status: 'new',
      nodes: [],
      original_cluster_id: 1,
      attributes: {
        editable: { common: { debug: { value: false } }, compute: { libvirt_type: { value: 'kvm' } } },
        generated: { keystone: { token: 's3cret-token' }, mysql: { root_password: 'r00t' } },
      },
    });
    // The original is left as it was.
    expect(environment(1).attributes.editable).toEqual({ common: { libvirt_type: { value: 'kvm' }, debug: { value: false } } });
  });

  it('refuses a release that is not newer than the one of the original (Nailgun), by id or by environment version, naming release_id', () => {
    const refused = (target: Release, originalRelease?: Release) => () =>
      cloneEnvironment(environment(1), target, { name: 'x', release_id: target.id }, undefined, originalRelease);
    const badRelease = expect.objectContaining({ name: 'InvalidInputError', problems: [expect.objectContaining({ field: 'release_id' })] });
    expect(refused(release(1))).toThrow(badRelease);
    const older = { ...release(2), id: 7, version: '2014.2-6.1' };
    expect(refused(older, release(1))).toThrow(badRelease);
    expect(refused({ ...older, version: 'kilo-7.0' }, release(1))).toThrow(badRelease);
    expect(refused({ ...older, version: 'mitaka-9.0' }, release(1))()).toMatchObject({ release_id: 7 });
    // A version that is not Fuel's <openstack>-<n.n> cannot be ordered: only the same release is refused.
    expect(isNewerRelease({ ...older, version: 'custom' }, release(1))).toBeUndefined();
    expect(refused({ ...older, version: 'custom' }, release(1))()).toMatchObject({ release_id: 7 });
    expect([
      isNewerRelease(release(2), release(1)),
      isNewerRelease(release(1), release(2)),
      isNewerRelease({ ...older, version: 'x-8.0.1' }, release(2)),
    ]).toEqual([true, false, true]);
  });

  it('refuses an attribute set in the original that the target removes with no rename, naming every one', () => {
    expect(() => cloneEnvironment(environment(2), release(2), { name: 'x', release_id: 2 }, undefined)).toThrow(
      expect.objectContaining({
        name: 'UpgradeConflictError',
        problems: [
          expect.objectContaining({ field: 'attributes.editable.storage.iser' }),
          expect.objectContaining({ field: 'attributes.editable.common.nova_quota' }),
        ],
      }),
    );
  });

  it('refuses an environment that already has a seed, or is one', () => {
    expect(() => cloneEnvironment(environment(1), release(2), { name: 'x', release_id: 2 }, 7)).toThrow(
      expect.objectContaining({ name: 'UpgradeNotAllowedError', message: expect.stringContaining('its upgrade seed is environment 7') }),
    );
    const seed: Environment = { ...environment(3), id: 9, original_cluster_id: 3 };
    expect(() => cloneEnvironment(seed, release(2), { name: 'x', release_id: 2 }, undefined)).toThrow(
      expect.objectContaining({ name: 'UpgradeNotAllowedError', message: expect.stringContaining('is itself the upgrade seed of environment 3') }),
    );
  });

  it('moves renamed paths that swap, reading the original values', () => {
    const upgraded = upgradeAttributes(
      { editable: { a: 1, b: 2 }, generated: {} },
      { renamed: { 'editable.a': 'editable.b', 'editable.b': 'editable.a' }, removed: ['editable.gone'] },
    );
    expect(upgraded).toEqual({ attributes: { editable: { a: 2, b: 1 }, generated: {} }, removedButSet: [], renameConflicts: [] });
  });

  it('never lets a rename overwrite a value set at its new path, or one on the way to it (409 naming it)', () => {
    const onto = upgradeAttributes({ editable: { a: 1, b: 2 }, generated: {} }, { renamed: { 'editable.a': 'editable.b' }, removed: [] });
    expect(onto.renameConflicts).toEqual([{ path: 'editable.b', message: 'editable.a is renamed to editable.b, which is set already' }]);
    const through = upgradeAttributes({ editable: { a: 1, c: 'flat' }, generated: {} }, { renamed: { 'editable.a': 'editable.c.d' }, removed: [] });
    expect(through.renameConflicts).toEqual([
      { path: 'editable.c.d', message: 'editable.a is renamed to editable.c.d, but editable.c is a value, not a group' },
    ]);
    const target = { ...release(2), attributeChanges: { renamed: { 'editable.common.libvirt_type': 'editable.common.debug' }, removed: [] } };
    expect(() => cloneEnvironment(environment(1), target, { name: 'x', release_id: 2 }, undefined)).toThrow(
      expect.objectContaining({
        name: 'UpgradeConflictError',
        problems: [{ field: 'attributes.editable.common.debug', message: expect.stringContaining('which is set already') }],
      }),
    );
  });
});

describe('upgrade seed assign', () => {
  const seed: Environment = { ...cloneEnvironment(environment(1), release(2), { name: 'prod-8.0', release_id: 2 }, undefined), id: 4 };
  const held = (nodeId: number, clusterId: number) => ({ node: site.environments.flatMap((e) => e.nodes).find((n) => n.id === nodeId)!, clusterId });

  it('lets a node of the original move to the seed, from the original', () => {
    expect(checkAssignment(seed, release(2), held(11, 1))).toEqual({ from: 1 });
  });

  it('refuses a node outside the original or in the seed already (405) and a role the seed release lacks (409)', () => {
    expect(() => checkAssignment(seed, release(2), held(21, 2))).toThrow(
      expect.objectContaining({ name: 'UpgradeNotAllowedError', field: 'node_id', message: expect.stringContaining('environment 2') }),
    );
    expect(() => checkAssignment(seed, release(2), held(11, 4))).toThrow(
      expect.objectContaining({ name: 'UpgradeNotAllowedError', message: expect.stringContaining('in the seed already') }),
    );
    expect(() => checkAssignment(environment(3), release(1), held(11, 1))).toThrow(expect.objectContaining({ name: 'UpgradeNotAllowedError' }));
    expect(() => checkAssignment(seed, release(2), held(13, 1))).toThrow(
      expect.objectContaining({
        name: 'UpgradeConflictError',
        problems: [expect.objectContaining({ field: 'roles', message: expect.stringContaining("role 'mongo'") })],
      }),
    );
  });
});

describe('environments in the site file', () => {
  it('masks every generated leaf and keeps the editable ones', () => {
    const masked = maskEnvironment(environment(1));
    expect(masked.attributes.generated).toEqual({ keystone: { admin_token: MASKED_VALUE }, mysql: { root_password: MASKED_VALUE } });
    expect(masked.attributes.editable).toEqual(environment(1).attributes.editable);
    expect(JSON.stringify(masked)).not.toContain('r00t');
  });

  it('keeps the shape of generated lists and unset values while masking what they hold', () => {
    const env = environment(1);
    const withLists = { ...env, attributes: { ...env.attributes, generated: { ssh: { keys: ['k1-secret', { private: 'k2-secret' }] }, unset: null } } };
    expect(maskEnvironment(withLists).attributes.generated).toEqual({ ssh: { keys: [MASKED_VALUE, { private: MASKED_VALUE }] }, unset: null });
  });

  it('refuses two environments of one name, in a site file and for a seed', () => {
    const twice = siteEnvironmentsSchema.safeParse({
      releases: site.releases,
      environments: [environment(1), { ...environment(2), name: environment(1).name }],
    });
    expect(twice.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['environments.1.name']);
    expect(() => checkSeedName('prod', site.environments)).toThrow(
      expect.objectContaining({ name: 'ResourceConflictError', problems: [{ field: 'name', message: "environment 1 is named 'prod' already" }] }),
    );
    expect(() => checkSeedName('prod-8.0', site.environments)).not.toThrow();
  });

  it('parses releases and environments in a site file and names bad fields', () => {
    const parsed = buildSiteWithEnvironments(1);
    expect(parsed.environments.map((e) => e.name)).toEqual(['prod', 'legacy', 'idle']);
    expect(() =>
      parseSiteDefinition({
        ...buildSite(1),
        releases: [{ id: 1, name: 'r', version: '1', roles: [], bootTemplate: 'img-1', attributeChanges: { removed: ['common.x'] } }],
        environments: [
          { id: 1, name: 'a', release_id: 5, nodes: [{ id: 1, name: 'n', ip: '10.0.0.300', mac: 'zz' }] },
          { id: 1, name: 'b', release_id: 1 },
        ],
      }),
    ).toThrow(
      expect.objectContaining({
        problems: expect.arrayContaining([
          expect.objectContaining({ field: 'releases[0].attributeChanges.removed[0]' }),
          expect.objectContaining({ field: 'environments[0].nodes[0].ip' }),
          expect.objectContaining({ field: 'environments[0].nodes[0].mac' }),
        ]),
      }),
    );
    // Environment nodes are site nodes, by name; a release installs with one of the site's templates; both are required.
    expect(() => parseSiteDefinition({ ...buildSite(1), ...site })).toThrow(
      expect.objectContaining({
        problems: expect.arrayContaining([
          { field: 'environments[0].nodes[0].name', message: "'node-11' is not a node of the site" },
          { field: 'environments[1].nodes[0].name', message: "'node-21' is not a node of the site" },
        ]),
      }),
    );
    expect(() => parseSiteDefinition({ ...buildSiteWithEnvironments(1), bootTemplates: ['img-1'] })).toThrow(
      expect.objectContaining({ problems: [{ field: 'releases[1].bootTemplate', message: "'img-2' is not one of the site's bootTemplates" }] }),
    );
    expect(releaseSchema.safeParse({ id: 3, name: 'r', version: '3', roles: [] }).error?.issues.map((i) => i.path.join('.'))).toEqual(['bootTemplate']);
    expect(releaseSchema.safeParse({ id: 3, name: 'r', version: '3', roles: [], bootTemplate: '../x' }).success).toBe(false);
    expect(
      siteEnvironmentsSchema
        .safeParse({
          releases: site.releases,
          environments: [
            { id: 1, name: 'a', release_id: 5 },
            { id: 1, name: 'b', release_id: 1 },
          ],
        })
        .error?.issues.map((i) => i.path.join('.')),
    ).toEqual(['environments.1.id', 'environments.0.release_id']);
  });
});
