import { nidName, parseNidNamePattern } from '../core/site/node-names';
import type { SiteDefinition } from './site-file';
import type { TimeSource } from '../time/sim-clock';
import { Timeline } from './timeline';
import { BootServiceModel } from './models/boot-service';
import { HeadNodeModel } from './models/head-node';
import { InventoryModel } from './models/inventory';
import { ProvisionerModel } from './models/provisioner';
import { TaskRunnerModel } from './models/task-runner';
import { WorkloadManagerModel } from './models/workload-manager';
import { NodeChangeLog } from './models/node-changes';
import type { SiteNodeState, SiteState } from '../core/site/site-state';

export type { SiteNodeState, SiteState } from '../core/site/site-state';

/** The simulated site: its four services sharing one simulated timeline. */
export class SiteSimulator {
  private readonly timeline: Timeline;
  readonly workloadManager: WorkloadManagerModel;
  readonly inventory: InventoryModel;
  readonly bootService: BootServiceModel;
  readonly provisioner: ProvisionerModel;
  /** Task-graph tasks on the nodes. */
  readonly tasks: TaskRunnerModel;
  /** The Slurm head node that SSM Run Command reaches. */
  readonly headNode: HeadNodeModel;
  private readonly violationLog: string[] = [];
  /** One node, two names (a CSM-style site): Slurm's name of each site node, and back. Identity elsewhere. */
  readonly names: SiteNodeNames;
  private readonly changeLog = new NodeChangeLog();

  constructor(
    site: SiteDefinition,
    readonly clock: TimeSource,
  ) {
    const timeline = new Timeline(clock);
    const violations = this.violationLog;
    this.timeline = timeline;
    const names = (this.names = siteNodeNames(site));
    this.tasks = new TaskRunnerModel({ timing: site.timing, nodes: site.nodes, timeline, violations });
    const changes = this.changeLog;
    // Slurm's view names nodes its own way: its model holds Slurm's names; the task log keeps the site's.
    const slurmNodes = site.nodes.map((n) => ({ ...n, name: names.slurm(n.name) }));
    const taskObserver = {
      drained: (name: string, reason: string, jobEndsAt?: number) => this.tasks.drained(names.site(name), reason, jobEndsAt),
      resumed: (name: string, reason?: string) => this.tasks.resumed(names.site(name), reason),
    };
    this.workloadManager = new WorkloadManagerModel(
      slurmNodes,
      timeline,
      site.workload,
      names.mapped ? taskObserver : this.tasks,
      { ...site.slurm, epilogSeconds: site.timing.epilogSeconds },
      changes,
    );
    this.inventory = new InventoryModel(site);
    this.bootService = new BootServiceModel({
      templates: site.bootTemplates,
      slurmName: names.slurm,
      timing: site.timing,
      nodes: site.nodes,
      workloadManager: this.workloadManager,
      inventory: this.inventory,
      timeline,
      violations,
      observer: this.tasks,
      changes,
    });
    this.provisioner = new ProvisionerModel({ timing: site.timing, nodes: site.nodes, timeline, violations, changes });
    this.headNode = new HeadNodeModel({
      workloadManager: this.workloadManager,
      inventory: this.inventory,
      provisioner: this.provisioner,
      tasks: this.tasks,
      timing: site.timing,
      nodes: slurmNodes,
      commandFaults: site.commandFaults,
      timeline,
      violations,
      ...(names.mapped ? { slurmHostName: (host: string) => (this.inventory.hasNode(host) ? names.slurm(host) : host), siteHostName: names.site } : {}),
      changes,
    });
  }

  get violations(): readonly string[] {
    return this.violationLog;
  }

  state(): SiteState {
    const now = this.timeline.sync();
    const nodes: Record<string, SiteNodeState> = {};
    const service = this.workloadManager.serviceRecords();
    // Keyed by the site's names (a CSM site's xnames); Slurm's counts are found by Slurm's name.
    for (const wlm of this.workloadManager.list()) {
      const name = this.names.site(wlm.name);
      nodes[name] = {
        wlmState: wlm.display,
        wlmReason: wlm.reason,
        bootCount: this.bootService.bootCount(name) + this.headNode.bootCount(wlm.name),
        drainCount: wlm.drainCount,
        resumeCount: wlm.resumeCount,
        failCount: wlm.failCount,
        killedJobs: wlm.killedJobs,
        prepareCount: this.provisioner.count(name, 'prepare'),
        deployCount: this.provisioner.count(name, 'deploy'),
        healthCheckCount: this.headNode.healthChecks.get(wlm.name) ?? 0,
        ...service.get(wlm.name)!,
      };
    }
    const groups = Object.fromEntries(this.inventory.listGroups().map((g) => [g.label, g.members]));
    const triggerFirings = this.workloadManager.triggers.firings;
    return {
      now,
      groups,
      nodes,
      violations: [...this.violationLog],
      taskLog: this.tasks.taskLog(),
      changes: this.changeLog.entries(),
      ...(triggerFirings.length > 0 ? { triggerFirings: [...triggerFirings] } : {}),
    };
  }
}

/** Slurm's name of a site node and back: the same name, or (a CSM-style site) `nid{nid:06}` from its nid. */
export interface SiteNodeNames {
  mapped: boolean;
  /** The site file's Slurm name pattern (`csm.slurmNodeNames`) when mapped; 'same' otherwise. */
  pattern: string;
  slurm(siteName: string): string;
  site(slurmName: string): string;
}

function siteNodeNames(site: SiteDefinition): SiteNodeNames {
  const pattern = site.csm ? parseNidNamePattern(site.csm.slurmNodeNames) : undefined;
  if (pattern === undefined || typeof pattern === 'string') return { mapped: false, pattern: 'same', slurm: (n) => n, site: (n) => n };
  const toSlurm = new Map(site.nodes.map((n) => [n.name, nidName(pattern, n.nid)]));
  const toSite = new Map([...toSlurm].map(([name, slurm]) => [slurm, name]));
  return { mapped: true, pattern: pattern.text, slurm: (n) => toSlurm.get(n) ?? n, site: (n) => toSite.get(n) ?? n };
}
