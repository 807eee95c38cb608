/**
 * The two sides of the differential test (test/real-slurm/differential.test.ts): a real Slurm
 * cluster and the simulator's head node, driven by the same operations and read through the same
 * command and parser, so that their nodes can be compared step by step.
 */
import { HEAD_NODE_INSTANCE_ID } from '../../simulator/models/head-node';
import { startSiteSimulator, type RunningSiteSimulator } from '../../simulator/http-server';
import { SimClock } from '../../time/sim-clock';
import { parseSiteDefinition, type SiteDefinitionInput } from '../../simulator/site-file';
import { nodesCommand, parseNodes, RealSlurmCluster, type RealNode, type RealSlurmOptions } from '../../scripts/slurm/real-slurm';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** What a step does and reads, on either side. */
export interface SlurmSide {
  readonly label: 'Slurm' | 'simulator';
  /** Any Slurm command line (scontrol, sinfo, sbatch, scancel): its exit code and output. */
  run(argv: readonly string[]): Promise<CommandResult>;
  /** A job of `seconds` on `node`, running once this resolves; its id. */
  submitJob(node: string, seconds: number): Promise<number>;
  /** The node goes down outside Slurm (a boot service's reboot): slurmd stops. */
  stopNode(node: string): Promise<void>;
  /** ...and boots again: slurmd starts and registers with a new BootTime. */
  startNode(node: string): Promise<void>;
  restartController(): Promise<void>;
  nodes(): Promise<RealNode[]>;
  /**
   * The site's own record of boots, where it keeps one: on the real side, per node, the reboots the RebootProgram
   * stand-in carried out plus the out-of-band boots a step made (startNode). The simulator has only BootTime.
   */
  bootsRecorded?(): ReadonlyMap<string, number>;
  /**
   * Lets the side run until `holds` (real: polling every 200 ms for up to `realSeconds`; simulator:
   * simulated time moving a second at a time for up to `simSeconds`). False when it never held: the
   * comparison then shows where the two differ.
   */
  settle(holds: (nodes: RealNode[]) => boolean, limits: { realSeconds: number; simSeconds: number }): Promise<boolean>;
  /** slurmrestd: status and body of a GET or POST. */
  restd(method: 'GET' | 'POST', path: string, body?: unknown): Promise<{ status: number; body: unknown; text: string }>;
  readonly restdVersions: readonly string[];
  /** What a failure about these nodes needs to be understood (the real side: reboot and slurmd logs). */
  diagnose(nodes: readonly string[]): string;
  /** `keep`: leave what explains a failure (the real cluster's dir, its logs) in place. */
  stop(options?: { keep?: boolean }): Promise<void>;
}

export class RealSide implements SlurmSide {
  readonly label = 'Slurm' as const;
  private constructor(readonly cluster: RealSlurmCluster) {}

  static async start(options: RealSlurmOptions): Promise<RealSide> {
    return new RealSide(await RealSlurmCluster.start(options));
  }

  get restdVersions(): readonly string[] {
    return this.cluster.restd?.versions ?? [];
  }

  run(argv: readonly string[]): Promise<CommandResult> {
    return this.cluster.tryRun(argv[0]!, argv.slice(1));
  }

  submitJob(node: string, seconds: number): Promise<number> {
    return this.cluster.submitJob(node, { seconds });
  }

  stopNode(node: string): Promise<void> {
    return this.cluster.stopSlurmd(node);
  }

  startNode(node: string): Promise<void> {
    this.outOfBandBoots.set(node, (this.outOfBandBoots.get(node) ?? 0) + 1);
    return this.cluster.startSlurmd(node, { booted: true });
  }

  /** Boots a step made outside Slurm (startNode), per node. */
  private readonly outOfBandBoots = new Map<string, number>();

  restartController(): Promise<void> {
    return this.cluster.restartController();
  }

  nodes(): Promise<RealNode[]> {
    return this.cluster.readNodes();
  }

  bootsRecorded(): ReadonlyMap<string, number> {
    const boots = new Map(this.outOfBandBoots);
    for (const entry of this.cluster.rebootLog()) if (entry.outcome === 'rebooted') boots.set(entry.node, (boots.get(entry.node) ?? 0) + 1);
    return boots;
  }

  async settle(holds: (nodes: RealNode[]) => boolean, { realSeconds }: { realSeconds: number }): Promise<boolean> {
    const deadline = Date.now() + realSeconds * 1000;
    for (;;) {
      try {
        if (holds(await this.nodes())) return true;
      } catch {
        // slurmctld restarting: ask again
      }
      if (Date.now() > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async restd(method: 'GET' | 'POST', path: string, body?: unknown) {
    return this.cluster.restdRequest(path, { method, ...(body !== undefined ? { body } : {}) });
  }

  diagnose(nodes: readonly string[]): string {
    return nodes.map((name) => this.cluster.nodeDiagnostics(name)).join('\n');
  }

  stop({ keep = false }: { keep?: boolean } = {}): Promise<void> {
    return this.cluster.stop(keep ? { keepDir: true } : {});
  }
}

/** The simulator on a hand-stepped clock: its head node runs the commands (as the SSM and local transports do), its slurmrestd answers over HTTP. */
export class SimulatedSide implements SlurmSide {
  readonly label = 'simulator' as const;
  private realMs = 0;
  private readonly generations = new Map<string, number>();
  private site!: RunningSiteSimulator;

  private constructor(private readonly version: string) {}

  static async start(site: SiteDefinitionInput): Promise<SimulatedSide> {
    const definition = parseSiteDefinition(site);
    const side = new SimulatedSide(definition.slurm.version);
    const clock = new SimClock({ timeScale: 1, realNow: () => side.realMs });
    side.site = await startSiteSimulator({ site: definition, clock });
    return side;
  }

  get simulator() {
    return this.site.simulator;
  }

  get restdVersions(): readonly string[] {
    return this.site.simulator.workloadManager.version.restdVersions;
  }

  /** Moves simulated time on. */
  advance(seconds: number): void {
    this.realMs += seconds * 1000;
  }

  async run(argv: readonly string[]): Promise<CommandResult> {
    const line = argv.map((word) => `'${word.replaceAll("'", `'\\''`)}'`).join(' ');
    const invocation = this.site.simulator.headNode.send(HEAD_NODE_INSTANCE_ID, [line], 3600);
    return { code: invocation.exitCode, stdout: invocation.stdout, stderr: invocation.stderr };
  }

  async submitJob(node: string, seconds: number): Promise<number> {
    const result = await this.run(['sbatch', '--parsable', '-w', node, '-t', String(Math.ceil(seconds / 60) + 1), '--wrap', `sleep ${seconds}`]);
    if (result.code !== 0) throw new Error(`sbatch on the simulator failed: ${result.stderr}`);
    return Number(result.stdout.trim());
  }

  /** What the simulated boot service does to Slurm when it reboots a node (simulator/models/boot-service.ts): slurmd goes away... */
  async stopNode(node: string): Promise<void> {
    this.generations.set(node, this.site.simulator.workloadManager.reboot(node));
  }

  /** ...and registers once the node booted. */
  async startNode(node: string): Promise<void> {
    const generation = this.generations.get(node);
    if (generation === undefined) throw new Error(`${node} was not stopped`);
    this.site.simulator.workloadManager.register(node, generation);
  }

  async restartController(): Promise<void> {
    this.site.simulator.headNode.restartController();
  }

  async nodes(): Promise<RealNode[]> {
    const result = await this.run(nodesCommand(this.version));
    if (result.code !== 0) throw new Error(`${nodesCommand(this.version).join(' ')} on the simulator failed: ${result.stderr}`);
    return parseNodes(this.version, result.stdout);
  }

  async settle(holds: (nodes: RealNode[]) => boolean, { simSeconds }: { simSeconds: number }): Promise<boolean> {
    for (let waited = 0; ; waited++) {
      if (holds(await this.nodes())) return true;
      if (waited >= simSeconds) return false;
      this.advance(1);
    }
  }

  async restd(method: 'GET' | 'POST', path: string, body?: unknown) {
    const response = await fetch(`${this.site.urls.slurmrestd}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // plain text
    }
    return { status: response.status, body: parsed, text };
  }

  diagnose(): string {
    return '';
  }

  stop(): Promise<void> {
    return this.site.close();
  }
}

/** What the table shows of a node and what is compared: base state, flags, reason, features. */
export function describeNode(node: RealNode | undefined): string {
  if (!node) return '(absent)';
  const features = [...node.features].sort().join(',');
  const active = [...node.activeFeatures].sort().join(',');
  return `${[node.base, ...[...node.flags].sort()].join('+')} reason=${JSON.stringify(node.reason)} features=${features}${active === features ? '' : ` active=${active}`}`;
}

export interface DifferentialRow {
  scenario: string;
  operation: string;
  slurm: string;
  simulator: string;
  same: boolean;
}

/** The markdown table of the rows (the closing note carries it). */
export function differentialTable(rows: readonly DifferentialRow[]): string {
  const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, '<br>');
  return [
    '| scenario | operation | real Slurm | simulator | same |',
    '|---|---|---|---|---|',
    ...rows.map((row) => `| ${cell(row.scenario)} | ${cell(row.operation)} | ${cell(row.slurm)} | ${cell(row.simulator)} | ${row.same ? 'yes' : '**no**'} |`),
  ].join('\n');
}
