import type { ScheduleRecord } from '../core/run-schedules/schedule';

/** Where the embedded control plane keeps its schedules, so a restarted `rollout serve` picks them up. */
export interface ScheduleStore {
  /** Creates the schedule; false if one of that name exists in the group. */
  createSchedule(record: ScheduleRecord): Promise<boolean>;
  getSchedule(groupName: string, name: string): Promise<ScheduleRecord | undefined>;
  /** Every schedule; of one group when given. */
  listSchedules(groupName?: string): Promise<ScheduleRecord[]>;
  /** Deletes the schedule; false if there was none. */
  deleteSchedule(groupName: string, name: string): Promise<boolean>;
}
