import type { SlurmVersion } from './slurm-version';
import type { WlmNodeSnapshot } from './workload-manager';

/** A node's features as slurmctld holds them: available (AvailableFeatures) and active (ActiveFeatures). */
export interface NodeFeatures {
  available: readonly string[];
  active: readonly string[];
}

export type FeaturesOf = (name: string) => NodeFeatures;

/** The simulated cluster's one partition, holding every node. */
export const SIMULATED_PARTITION = 'batch';

const seconds = (ms: number | undefined) => (ms === undefined ? undefined : Math.floor(ms / 1000));

/**
 * How `scontrol show node` prints a time: local ISO without zone (the simulator runs in UTC), or as
 * SLURM_TIME_FORMAT says (`%s`: epoch seconds, what the connectors ask for); `None` when unset.
 */
export type TimeFormat = 'iso' | 'epoch';

function slurmTime(ms: number | undefined, format: TimeFormat): string {
  if (ms === undefined) return 'None';
  return format === 'epoch' ? String(Math.floor(ms / 1000)) : new Date(ms).toISOString().slice(0, 19);
}

/** node_state_flag_string()'s order (src/common/slurm_protocol_defs.c node_state_flags[]). */
const FLAG_ORDER = ['COMPLETING', 'DRAIN', 'FAIL', 'REBOOT_REQUESTED', 'REBOOT_ISSUED', 'NOT_RESPONDING'];

/** node_state_string_complete(): the base, then each flag after `+` (`IDLE+DRAIN+REBOOT_REQUESTED`). */
export function stateComplete(node: WlmNodeSnapshot): string {
  return [node.base, ...[...node.flags].sort((a, b) => FLAG_ORDER.indexOf(a) - FLAG_ORDER.indexOf(b))].join('+');
}

/**
 * `scontrol [-o] show node`: one `Key=Value` record per node (src/api/node_info.c
 * slurm_sprint_node_table), on one line with `-o`, else over several indented lines. `Reason=`
 * comes last, with who set it and when, as the value may hold spaces.
 */
export function scontrolShowNodeText(
  nodes: readonly WlmNodeSnapshot[],
  featuresOf: FeaturesOf,
  version: SlurmVersion,
  now: number,
  oneLiner: boolean,
  timeFormat: TimeFormat = 'iso',
): string {
  const time = (ms: number | undefined) => slurmTime(ms, timeFormat);
  return nodes
    .map((node, i) => {
      const { available, active } = featuresOf(node.name);
      const allocated = node.base === 'ALLOCATED' || node.base === 'MIXED';
      const lines = [
        [`NodeName=${node.name}`, 'Arch=x86_64', 'CoresPerSocket=32', ''],
        [`CPUAlloc=${allocated ? 128 : 0}`, 'CPUEfctv=128', 'CPUTot=128', `CPULoad=${allocated ? '64.00' : '0.03'}`],
        [`AvailableFeatures=${available.join(',') || '(null)'}`],
        [`ActiveFeatures=${active.join(',') || '(null)'}`],
        ['Gres=(null)'],
        [`NodeAddr=${address(i)}`, `NodeHostName=${node.name}`, `Version=${version.full}`],
        ['OS=Linux 5.14.0-427.13.1.el9_4.x86_64 #1 SMP PREEMPT_DYNAMIC Wed Apr 10 10:29:16 EDT 2024', ''],
        ['RealMemory=256000', `AllocMem=${allocated ? 152000 : 0}`, `FreeMem=${allocated ? 98304 : 250112}`, 'Sockets=2', 'Boards=1'],
        [`State=${stateComplete(node)}`, 'ThreadsPerCore=2', 'TmpDisk=0', 'Weight=1', 'Owner=N/A', 'MCS_label=N/A'],
        [`Partitions=${SIMULATED_PARTITION}`, ''],
        [`BootTime=${time(node.bootTime)}`, `SlurmdStartTime=${time(node.bootTime)}`],
        [`LastBusyTime=${time(node.bootTime)}`],
        ['CfgTRES=cpu=128,mem=250G,billing=128'],
        [`AllocTRES=${allocated ? 'cpu=128,mem=152000M' : ''}`],
        ['CapWatts=n/a'],
        ['CurrentWatts=0', 'AveWatts=0'],
        ['ExtSensorsJoules=n/s', 'ExtSensorsWatts=0', 'ExtSensorsTemp=n/s'],
        ...(node.reason ? [[`Reason=${node.reason} [root@${time(now)}]`]] : []),
      ];
      return oneLiner
        ? `${lines.map((words) => words.join(' ')).join(' ')}\n`
        : `${lines.map((words, k) => `${k === 0 ? '' : '   '}${words.join(' ')}`).join('\n')}\n\n`;
    })
    .join('');
}

function address(index: number): string {
  return `10.100.${Math.floor(index / 250)}.${(index % 250) + 1}`;
}

/**
 * A node as openapi v0.0.36-38 print it (src/plugins/openapi/v0.0.38/nodes.c _dump_node; seen from
 * 22.05.8's `sinfo --json` and slurmrestd): `state` the base in lowercase, `state_flags` the rest,
 * times plain numbers, features comma-separated strings.
 */
export function nodeV38(node: WlmNodeSnapshot, features: NodeFeatures, index: number, version: SlurmVersion) {
  const boot = seconds(node.bootTime) ?? 0;
  const allocated = node.base === 'ALLOCATED' || node.base === 'MIXED';
  return {
    architecture: 'x86_64',
    burstbuffer_network_address: '',
    boards: 1,
    boot_time: boot,
    comment: '',
    cores: 32,
    cpu_binding: 0,
    cpu_load: allocated ? 6400 : 3,
    extra: '',
    free_memory: allocated ? 98_304 : 250_112,
    cpus: 128,
    last_busy: boot,
    features: features.available.join(','),
    active_features: features.active.join(','),
    gres: '',
    gres_drained: 'N/A',
    gres_used: '',
    mcs_label: '',
    name: node.name,
    next_state_after_reboot: node.nextState === undefined ? 'invalid' : node.nextState === 'DOWN' ? 'down' : 'idle',
    address: address(index),
    hostname: node.name,
    state: node.base.toLowerCase(),
    state_flags: node.flags,
    next_state_after_reboot_flags: [],
    operating_system: 'Linux 5.14.0-427.13.1.el9_4.x86_64 #1 SMP PREEMPT_DYNAMIC Wed Apr 10 10:29:16 EDT 2024',
    owner: null,
    partitions: [SIMULATED_PARTITION],
    port: 6818,
    real_memory: 256_000,
    reason: node.reason ?? '',
    reason_changed_at: node.reason ? boot : 0,
    reason_set_by_user: 'root',
    slurmd_start_time: boot,
    sockets: 2,
    threads: 2,
    temporary_disk: 0,
    weight: 1,
    tres: 'cpu=128,mem=250G,billing=128',
    slurmd_version: version.full,
    alloc_memory: allocated ? 152_000 : 0,
    alloc_cpus: allocated ? 128 : 0,
    idle_cpus: allocated ? 0 : 128,
    tres_used: allocated ? 'cpu=128,mem=152000M' : null,
    tres_weighted: 0.0,
  };
}

/** openapi v0.0.36-38's `meta`: the plugin and the release (22.05.8 prints `minor: 5` for `05`). */
export function metaV38(version: SlurmVersion, apiVersion = 'v0.0.38') {
  return {
    plugin: { type: `openapi/${apiVersion}`, name: `Slurm OpenAPI ${apiVersion}` },
    Slurm: { version: { major: version.major, micro: version.micro, minor: version.minor }, release: version.full },
  };
}

/** JSON as Slurm's serializer prints it up to 22.05: pretty, `/` escaped. */
export function slurmJsonV38(value: unknown): string {
  return `${JSON.stringify(value, null, 2).replace(/\//g, '\\/')}\n`;
}

/** `sinfo --json` on 22.05: every node (it ignores `-n`), v0.0.38's shape. */
export function sinfoJsonV38(nodes: readonly WlmNodeSnapshot[], featuresOf: FeaturesOf, version: SlurmVersion): string {
  return slurmJsonV38({ meta: metaV38(version), errors: [], nodes: nodes.map((node, i) => nodeV38(node, featuresOf(node.name), i, version)) });
}

/** The `sinfo -O` fields the simulator prints: what each shows of a node. */
const SINFO_FIELDS: Record<string, (node: WlmNodeSnapshot, features: NodeFeatures) => string> = {
  nodelist: (node) => node.name,
  nodehost: (node) => node.name,
  partition: () => SIMULATED_PARTITION,
  statecomplete: (node) => stateComplete(node).toLowerCase(),
  statelong: (node) => node.display.toLowerCase(),
  reason: (node) => node.reason || 'none',
  features: (node, features) => features.available.join(',') || '(null)',
  featuresact: (node, features) => features.active.join(',') || '(null)',
};

/**
 * `sinfo -N -O <Field[:[.]size][suffix]>,...` (src/sinfo/opts.c _parse_long_format): one line per node
 * (and partition: the simulated cluster has one); size 0 prints the field unpadded, `.` pads on the
 * left, the suffix follows the field. Undefined for a field the simulator does not print.
 */
export function sinfoLongFormat(nodes: readonly WlmNodeSnapshot[], featuresOf: FeaturesOf, format: string): string | undefined {
  const fields = format.split(',').map((spec) => {
    const match = /^([A-Za-z]+)(?::(\.?)(\d*)(.*))?$/.exec(spec);
    const print = match && SINFO_FIELDS[match[1]!.toLowerCase()];
    return print ? { print, right: match[2] === '.', size: match[3] ? Number(match[3]) : 20, suffix: match[4] ?? ' ' } : undefined;
  });
  if (fields.some((f) => f === undefined)) return undefined;
  return nodes
    .map((node) => {
      const features = featuresOf(node.name);
      const words = fields.map((field) => {
        const text = field!.print(node, features);
        const padded =
          field!.size === 0 ? text : field!.right ? text.slice(0, field!.size).padStart(field!.size) : text.slice(0, field!.size).padEnd(field!.size);
        return `${padded}${field!.suffix}`;
      });
      return `${words.join('').trimEnd()}\n`;
    })
    .join('');
}
