import type { ApiFault, SiteServiceName } from './site-file';

interface Rule extends ApiFault {
  /** Matching calls seen so far. */
  seen: number;
}

/** What a matching fault does to a request: answer this error status, or leave it unanswered. */
export type InjectedFault = number | 'hang';

/** The site file's `apiFaults`: each rule lets `afterCalls` matching calls through, then fails `count` of them. */
export class ApiFaults {
  private readonly rules: Rule[];

  constructor(faults: readonly ApiFault[]) {
    this.rules = faults.map((f) => ({ ...f, seen: 0 }));
  }

  /** The status to answer instead of serving the request, 'hang' to leave it unanswered, or undefined to serve it. */
  check(service: SiteServiceName, method: string, path: string): InjectedFault | undefined {
    let status: InjectedFault | undefined;
    for (const rule of this.rules) {
      if (rule.service !== service || (rule.method && rule.method !== method) || (rule.path && !path.includes(rule.path))) continue;
      rule.seen++;
      // Every matching rule counts the call, so each keeps its own schedule even when another one fires.
      if (status === undefined && rule.seen > rule.afterCalls && rule.seen <= rule.afterCalls + rule.count) status = rule.hang ? 'hang' : rule.status;
    }
    return status;
  }
}
