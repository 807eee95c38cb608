import { apiVersionNumber, type SlurmVersion } from './slurm-version';
import { SIMULATED_PARTITION, type FeaturesOf, type NodeFeatures } from './slurm-output';
import type { WlmNodeSnapshot } from './workload-manager';

/**
 * What `scontrol --json show node` prints (Slurm 23.02+, in the release's newest data_parser): the
 * whole response, pretty-printed as the CLI serializes it (SER_FLAGS_PRETTY), with every field of a
 * node (SchedMD's V0041 node schema, src/plugins/data_parser/v0.0.41/parsers.c), about 3 KB a node.
 * The connectors read a few of them; the rest is here so that what crosses SSM's 24,000-character
 * output limit, and the bytes the bench counts, are a real cluster's.
 */
export function scontrolShowNodeJson(nodes: readonly WlmNodeSnapshot[], featuresOf: FeaturesOf, now: number, version: SlurmVersion): string {
  const parser = version.cliDataParser ?? 'v0.0.41';
  const response = {
    nodes: nodes.map((node, i) => slurmNode(node, featuresOf(node.name), i, parser, version)),
    last_update: noVal(Math.floor(now / 1000)),
    meta: {
      plugin: { type: '', name: '', data_parser: `data_parser/${parser}`, accounting_storage: 'accounting_storage/slurmdbd' },
      client: { source: '/dev/pts/0', user: 'root', group: 'root' },
      command: ['show', 'node'],
      slurm: {
        version: { major: String(version.major), micro: String(version.micro), minor: String(version.minor).padStart(2, '0') },
        release: version.full,
        cluster: 'simulated',
      },
    },
    errors: [],
    warnings: [],
  };
  return `${JSON.stringify(response, null, 2)}\n`;
}

/** Slurm's `{set, infinite, number}` for a value that may be unset. */
function noVal(value: number | undefined) {
  return { set: value !== undefined, infinite: false, number: value ?? 0 };
}

/**
 * One node in data_parser `parser`'s shape (slurmrestd's v0.0.39+ and `scontrol --json`): state a
 * list; times plain numbers in v0.0.39, `{set, infinite, number}` (TIMESTAMP_NO_VAL) from v0.0.40.
 */
export function slurmNode(node: WlmNodeSnapshot, features: NodeFeatures, index: number, parser: string, version: SlurmVersion) {
  const boot = node.bootTime === undefined ? undefined : Math.floor(node.bootTime / 1000);
  const time = (value: number | undefined) => (apiVersionNumber(parser) >= 40 ? noVal(value) : (value ?? 0));
  const allocated = node.base === 'ALLOCATED' || node.base === 'MIXED';
  return {
    architecture: 'x86_64',
    burstbuffer_network_address: '',
    boards: 1,
    boot_time: time(boot),
    cluster_name: 'simulated',
    cores: 32,
    specialized_cores: 0,
    cpu_binding: 0,
    cpu_load: allocated ? 6400 : 3,
    free_mem: noVal(allocated ? 98_304 : 250_112),
    cpus: 128,
    effective_cpus: 128,
    specialized_cpus: '',
    energy: {
      average_watts: 0,
      base_consumed_energy: 0,
      consumed_energy: 0,
      current_watts: noVal(undefined),
      previous_consumed_energy: 0,
      last_collected: 0,
    },
    external_sensors: {},
    extra: '',
    power: {},
    features: [...features.available],
    active_features: [...features.active],
    gres: '',
    gres_drained: 'N/A',
    gres_used: '',
    instance_id: '',
    instance_type: '',
    last_busy: time(boot),
    mcs_label: '',
    specialized_memory: 0,
    name: node.name,
    next_state_after_reboot: [node.nextState === undefined ? 'INVALID' : node.nextState === 'DOWN' ? 'DOWN' : 'RESUME'],
    address: `10.100.${Math.floor(index / 250)}.${(index % 250) + 1}`,
    hostname: node.name,
    state: [node.base, ...node.flags],
    operating_system: 'Linux 5.14.0-427.13.1.el9_4.x86_64 #1 SMP PREEMPT_DYNAMIC Wed Apr 10 10:29:16 EDT 2024',
    owner: '',
    partitions: [SIMULATED_PARTITION],
    port: 6818,
    real_memory: 256_000,
    comment: '',
    reason: node.reason ?? '',
    reason_changed_at: time(node.reason ? (boot ?? 0) : 0),
    reason_set_by_user: node.reason ? 'root' : '',
    resume_after: time(undefined),
    reservation: '',
    alloc_memory: allocated ? 152_000 : 0,
    alloc_cpus: allocated ? 128 : 0,
    alloc_idle_cpus: allocated ? 0 : 128,
    tres_used: allocated ? 'cpu=128,mem=152000M' : '',
    tres_weighted: 0,
    slurmd_start_time: time(boot),
    sockets: 2,
    threads: 2,
    temporary_disk: 0,
    weight: 1,
    tres: 'cpu=128,mem=250G,billing=128',
    version: version.full,
  };
}
