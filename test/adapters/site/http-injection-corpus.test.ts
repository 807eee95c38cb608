import { BosBootService } from '../../../adapters/site/bos-boot-service';
import { HsmInventory } from '../../../adapters/site/hsm-inventory';
import { HttpProvisioner } from '../../../adapters/site/http-provisioner';
import { urlPath } from '../../../adapters/site/http-json-client';
import { SlurmRestWorkloadManager } from '../../../adapters/site/slurm-rest-workload-manager';
import { InvalidInputError } from '../../../core/errors';
import { upgradeRequestSchema } from '../../../core/rolling-upgrade/upgrade-request';
import { INJECTION_CORPUS } from '../../support/injection-corpus';
import { stubServer } from '../../support/stub-server';

/** The HTTP connectors, as the command connectors: a bad name is refused before any request leaves. */
describe('the HTTP connectors and the injection corpus', () => {
  let server: Awaited<ReturnType<typeof stubServer>>;
  beforeAll(async () => {
    // Answers everything as an empty success: a value that got through would be sent, and seen.
    server = await stubServer(() => ({ status: 200, text: '{}' }));
  });
  afterAll(() => server.close());

  it.each(INJECTION_CORPUS)('%j reaches no URL of slurmrestd, BOS, HSM or the provisioner', async (value) => {
    const wlm = new SlurmRestWorkloadManager({ baseUrl: server.url, apiVersion: 'v0.0.41' });
    const bos = new BosBootService({ baseUrl: server.url });
    const hsm = new HsmInventory({ baseUrl: server.url });
    const provisioner = new HttpProvisioner({ baseUrl: server.url });
    const attempts: (() => Promise<unknown>)[] = [
      () => wlm.getNodes(['nid001', value]),
      () => wlm.drain(value, 'rolling-upgrade'),
      () => wlm.fail('nid001', `${value}\n`),
      () => wlm.resume(value),
      () => wlm.drainNodes(['nid001', value], 'rolling-upgrade'),
      () => bos.templateExists(value),
      () => bos.createSession({ name: 'a', operation: 'reboot', templateName: value, limit: { label: 'upgrading' } }),
      () => bos.createSession({ name: 'b', operation: 'reboot', templateName: 'img', limit: { nodes: ['nid001', value] } }),
      () => hsm.getGroupMembers(value),
      () => hsm.addGroupMembers('upgrading', [value]),
      () => hsm.removeGroupMembers('upgrading', ['nid001', value]),
      () => provisioner.startAction({ name: 'x', action: 'prepare', nodes: ['nid001', value] }),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toBeInstanceOf(InvalidInputError);
    expect(server.seen).toEqual([]);
  });

  it('a path segment that a URL resolves away (., .., empty) is refused, naming the path', () => {
    for (const value of ['.', '..', '']) {
      expect(() => urlPath`/v2/sessiontemplates/${value}`).toThrow(
        `Invalid URL path segment: path: ${JSON.stringify(value)} would not name one resource in /v2/sessiontemplates/{}`,
      );
    }
    expect(urlPath`/v2/sessiontemplates/${'a b/..c'}`).toBe('/v2/sessiontemplates/a%20b%2F..c');
  });

  it('an upgrade request refuses a template that would reach the boot service as a path, naming the field', () => {
    const request = { startingLabel: 's', upgradingLabel: 'u', failedLabel: 'f', upgradeStepSize: 1, workloadManagerType: 'slurm' };
    for (const template of ['..', 'img/../x', '$(id)', '--help', 'a b']) {
      const parsed = upgradeRequestSchema.safeParse({ ...request, upgradeTemplateId: template });
      expect(parsed.success).toBe(false);
      expect(parsed.error?.issues[0]?.message).toContain(`upgradeTemplateId ${JSON.stringify(template)} is not a valid boot template`);
    }
    expect(upgradeRequestSchema.safeParse({ ...request, upgradeTemplateId: 'registry/cos:2.4+gpu' }).success).toBe(true);
  });
});
