import { ScontrolWorkloadManager } from '../../../../adapters/site/commands/scontrol-workload-manager';
import { SlurmRebootBootService } from '../../../../adapters/site/commands/slurm-reboot-boot-service';
import { InvalidInputError } from '../../../../core/errors';
import type { CommandTransport } from '../../../../ports/command-transport';
import { INJECTION_CORPUS } from '../../../support/injection-corpus';
import { memoryConnectorState } from '../../../support/connector-state';

/** Records every script; answers as if nothing were wrong. */
function recordingTransport(): CommandTransport & { scripts: string[] } {
  const scripts: string[] = [];
  const ok = { exitCode: 0, stdout: '{"nodes":[]}', stderr: '', stdoutTruncated: false };
  return {
    scripts,
    run: async (script) => (scripts.push(script), ok),
    start: async (script) => (scripts.push(script), 'id'),
    findStarted: async () => undefined,
    poll: async () => ok,
  };
}

describe.each(INJECTION_CORPUS)('the injection value %j', (value) => {
  it('is refused by every command connector before any command runs', async () => {
    const transport = recordingTransport();
    const wlm = new ScontrolWorkloadManager({ transport });
    const groups: Record<string, string[]> = { upgrading: [value] };
    const inventory = {
      getGroupMembers: async (l: string) => groups[l] ?? [],
      addGroupMembers: async () => {},
      removeGroupMembers: async () => {},
      listNodes: async () => [],
    };
    const boot = new SlurmRebootBootService({
      transport,
      inventory,
      prepareCommand: 'wwctl node set --image {template} {nodes}',
      sessions: memoryConnectorState().records('slurm-reboot'),
    });
    const attempts: (() => Promise<unknown>)[] = [
      () => wlm.getNodes(['nid001', value]),
      () => wlm.drain(value, 'rolling-upgrade'),
      () => wlm.fail('nid001', `${value}\n`),
      () => wlm.resume(value),
      () => boot.createSession({ name: 'a', operation: 'reboot', templateName: value, limit: { label: 'upgrading' } }),
      () => boot.createSession({ name: 'b', operation: 'reboot', templateName: 'img', limit: { label: 'upgrading' } }),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toBeInstanceOf(InvalidInputError);
    expect(transport.scripts).toEqual([]);
  });
});
