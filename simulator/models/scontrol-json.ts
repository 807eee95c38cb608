import type { WlmNodeSnapshot } from './workload-manager';

/**
 * What `scontrol --json show node` prints (Slurm 24.05+, data_parser v0.0.41): the whole response,
 * pretty-printed as the CLI serializes it (SER_FLAGS_PRETTY), with every field of a node
 * (SchedMD's V0041 node schema), about 3 KB a node. The connectors read five of them; the rest is
 * here so that what crosses SSM's 24,000-character output limit, and the bytes the bench counts,
 * are a real cluster's.
 */
export function scontrolShowNodeJson(nodes: readonly WlmNodeSnapshot[], featuresOf: (name: string) => readonly string[], now: number): string {
  const response = {
    nodes: nodes.map((node, i) => slurmNode(node, featuresOf(node.name), i)),
    last_update: noVal(Math.floor(now / 1000)),
    meta: {
      plugin: { type: '', name: '', data_parser: 'data_parser/v0.0.41', accounting_storage: 'accounting_storage/slurmdbd' },
      client: { source: '/dev/pts/0', user: 'root', group: 'root' },
      command: ['show', 'node'],
      slurm: { version: { major: '24', micro: '5', minor: '05' }, release: '24.05.5', cluster: 'simulated' },
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

function slurmNode(node: WlmNodeSnapshot, features: readonly string[], index: number) {
  const boot = node.bootTime === undefined ? undefined : Math.floor(node.bootTime / 1000);
  const allocated = node.base === 'ALLOCATED' || node.base === 'MIXED';
  return {
    architecture: 'x86_64',
    burstbuffer_network_address: '',
    boards: 1,
    boot_time: noVal(boot),
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
    features: [...features],
    active_features: [...features],
    gres: '',
    gres_drained: 'N/A',
    gres_used: '',
    instance_id: '',
    instance_type: '',
    last_busy: noVal(boot),
    mcs_label: '',
    specialized_memory: 0,
    name: node.name,
    next_state_after_reboot: ['INVALID'],
    address: `10.100.${Math.floor(index / 250)}.${(index % 250) + 1}`,
    hostname: node.name,
    state: [node.base, ...node.flags],
    operating_system: 'Linux 5.14.0-427.13.1.el9_4.x86_64 #1 SMP PREEMPT_DYNAMIC Wed Apr 10 10:29:16 EDT 2024',
    owner: '',
    partitions: ['batch'],
    port: 6818,
    real_memory: 256_000,
    comment: '',
    reason: node.reason ?? '',
    reason_changed_at: noVal(node.reason ? boot ?? 0 : 0),
    reason_set_by_user: node.reason ? 'root' : '',
    resume_after: noVal(undefined),
    reservation: '',
    alloc_memory: allocated ? 152_000 : 0,
    alloc_cpus: allocated ? 128 : 0,
    alloc_idle_cpus: allocated ? 0 : 128,
    tres_used: allocated ? 'cpu=128,mem=152000M' : '',
    tres_weighted: 0,
    slurmd_start_time: noVal(boot),
    sockets: 2,
    threads: 2,
    temporary_disk: 0,
    weight: 1,
    tres: 'cpu=128,mem=250G,billing=128',
    version: '24.05.5',
  };
}
