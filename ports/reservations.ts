/**
 * Slurm maintenance reservations held for a rolling upgrade's planned slots: from its start, a
 * reservation keeps every job whose time limit runs past it off its nodes (Slurm's rule,
 * src/slurmctld/reservation.c). Names carry the session, so another control plane (or an admin's
 * `scontrol show reservation`) sees whose they are.
 */
export interface MaintenanceReservation {
  /** `rollout-<session>-<start>`: see core/rolling-upgrade/slot-plan.ts. */
  name: string;
  nodes: string[];
  /** Epoch ms. */
  startsAt: number;
  endsAt: number;
}

export interface MaintenanceReservations {
  /** The reservations whose name starts with `prefix`, not yet over. */
  list(prefix: string): Promise<MaintenanceReservation[]>;
  /**
   * Makes the site hold these changes: creates (`flags=maint`), node changes (`scontrol update
   * reservationname= nodes=`) and deletes, in one round trip per few dozen commands. A failure
   * stops there and throws: the increment's retry lists again.
   */
  apply(changes: { put: readonly MaintenanceReservation[]; update: readonly MaintenanceReservation[]; remove: readonly string[] }): Promise<void>;
}
