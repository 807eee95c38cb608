import { systemClock, type Clock } from '../../../core/clock';
import { SiteServiceError } from '../../../core/errors';
import { compressHostlist, expandHostlist } from '../../../core/site/hostlist';
import { validNodeNames } from '../../../core/site/names';
import type { CommandTransport } from '../../../ports/command-transport';
import type { MaintenanceReservation, MaintenanceReservations } from '../../../ports/reservations';
import { runChecked } from './scontrol-workload-manager';
import { shellCommand } from './shell-quote';

/** Reservation names we make: letters, digits, `-`, `_`, `.` (Slurm takes any name; ours reach a shell, quoted, and a URL). */
const RESERVATION_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

function validReservationName(name: string): string {
  if (!RESERVATION_NAME.test(name)) throw new SiteServiceError('workload-manager', `invalid reservation name '${name}'`);
  return name;
}

/** Commands per script sent to the head node. */
const SCRIPT_LINES = 50;

/** Whole seconds from now, never negative: relative times need no agreement on the head node's time zone. */
const fromNow = (at: number, now: number) => `now+${Math.max(0, Math.round((at - now) / 1000))}`;

/**
 * Maintenance reservations through `scontrol` on the head node (SSM or local), one script per
 * call: `scontrol create reservation ReservationName=... Nodes=... StartTime=now+S EndTime=now+E
 * Users=root Flags=MAINT,IGNORE_JOBS`, `scontrol update ReservationName=... Nodes=...` (a reservation's times never move: Slurm refuses for one that has begun),
 * `scontrol delete ReservationName=...`, and `env SLURM_TIME_FORMAT=%s scontrol -o show reservation` to list
 * (epoch times). Works on every Slurm with scontrol (22.05 included); slurmrestd can create
 * reservations only from its newest data parsers, so the command transport is the one path here.
 */
export class ScontrolReservations implements MaintenanceReservations {
  private readonly clock: Clock;
  constructor(
    private readonly transport: CommandTransport,
    options: { scontrol?: string; clock?: Clock; users?: string } = {},
  ) {
    this.scontrol = options.scontrol ?? 'scontrol';
    this.clock = options.clock ?? systemClock;
    this.users = options.users ?? 'root';
  }
  private readonly scontrol: string;
  private readonly users: string;

  async list(prefix: string): Promise<MaintenanceReservation[]> {
    const result = await runChecked(
      'workload-manager',
      this.transport,
      shellCommand(['env', 'SLURM_TIME_FORMAT=%s', this.scontrol, '-o', 'show', 'reservation']),
    );
    // A listing cut short (SSM keeps 24,000 characters) would make held reservations look missing: created twice, never deleted.
    if (result.stdoutTruncated) {
      throw new SiteServiceError(
        'workload-manager',
        `scontrol show reservation printed more than the transport returns (${result.stdout.length} characters kept): too many reservations on the site to read them in one listing`,
      );
    }
    return parseReservations(result.stdout).filter((r) => r.name.startsWith(prefix));
  }

  async apply({ put, update, remove }: Parameters<MaintenanceReservations['apply']>[0]): Promise<void> {
    if (put.length + update.length + remove.length === 0) return;
    const now = this.clock.now();
    const times = (r: MaintenanceReservation) => [`StartTime=${fromNow(r.startsAt, now)}`, `EndTime=${fromNow(r.endsAt, now)}`];
    const nodes = (r: MaintenanceReservation) => `Nodes=${compressHostlist(validNodeNames(r.nodes))}`;
    // IGNORE_JOBS: a job still running past the start (its limit was longer than the plan knew) does not refuse the create (reservation.c _job_overlap).
    const script = (lines: string[]) => ['set -e', ...lines].join('\n');
    const lines = [
      ...remove.map((name) => shellCommand([this.scontrol, 'delete', `ReservationName=${validReservationName(name)}`])),
      ...put.map((r) =>
        shellCommand([
          this.scontrol,
          'create',
          'reservation',
          `ReservationName=${validReservationName(r.name)}`,
          nodes(r),
          ...times(r),
          `Users=${this.users}`,
          'Flags=MAINT,IGNORE_JOBS',
        ]),
      ),
      ...update.map((r) => shellCommand([this.scontrol, 'update', `ReservationName=${validReservationName(r.name)}`, nodes(r)])),
    ];
    // One script, stopping at the first refusal: the increment fails and its retry lists again, so a
    // create already done or a delete of one gone (it ended) is not repeated.
    // At most SCRIPT_LINES commands a script: an SSM command's parameters stay small (a few KB) at any fleet size.
    for (let i = 0; i < lines.length; i += SCRIPT_LINES) await runChecked('workload-manager', this.transport, script(lines.slice(i, i + SCRIPT_LINES)));
  }
}

/** `scontrol -o show reservation` with SLURM_TIME_FORMAT=%s: one line per reservation; "No reservations in the system" when none. */
export function parseReservations(stdout: string): MaintenanceReservation[] {
  const out: MaintenanceReservation[] = [];
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('ReservationName=')) continue;
    const fields = new Map(
      line
        .trim()
        .split(/\s+/)
        .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)] as [string, string]),
    );
    const epoch = (key: string) => Number(fields.get(key)) * 1000;
    const nodes = fields.get('Nodes');
    out.push({
      name: fields.get('ReservationName')!,
      nodes: nodes && nodes !== '(null)' ? expandHostlist(nodes) : [],
      startsAt: epoch('StartTime'),
      endsAt: epoch('EndTime'),
    });
  }
  return out;
}
