/**
 * Slurm maintenance reservations held for a rolling upgrade's planned slots: from its start, a
 * reservation keeps every job whose time limit runs past it off its nodes (Slurm's rule,
 * src/slurmctld/reservation.c). Names carry the session, so another control plane (or an admin's
 * `scontrol show reservation`) sees whose they are.
 */
export interface MaintenanceReservation {
  /** `rollout-<session>-<node>`: see core/rolling-upgrade/slot-plan.ts. */
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
   * Makes the site hold exactly these changes, in one round trip where the transport allows:
   * creates (`flags=maint`), moves (`scontrol update reservationname=`) and deletes. A delete of a
   * reservation that is gone already, or a create of one that exists, is not an error (a retried
   * increment repeats them).
   */
  apply(changes: { put: readonly MaintenanceReservation[]; move: readonly MaintenanceReservation[]; remove: readonly string[] }): Promise<void>;
}
