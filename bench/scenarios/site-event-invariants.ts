import { BACKSTOP_POLLS } from '../../core/site/site-event';
import { TRIGGER_PASS_MS } from '../../simulator/models/trigger-manager';
import type { ScenarioRun } from './run-scenario';

/**
 * The invariants of a run whose site's triggers were armed (issue 29), judged against the site's own record (the
 * simulated slurmctld's trigger list, its change log) and the intake's record of the firings it took:
 * - site-triggers-cleared: once the session ended (completed, stopped, cancelled, halted), none of its triggers
 *   stays in `strigger --get`;
 * - second-delivery-changes-nothing: a firing delivered again is not recorded again and wakes nothing;
 * - site-events-counted-once: the session counts each distinct firing at most once (its siteEventCount is at most the
 *   firings recorded for it, plus one per stop or cancel the operator sent; a firing of a kind the parked wait does
 *   not end is not counted), and counts one at least when firings were recorded for it;
 * - waits-bounded: the site never stands still under the run longer than its longest wait (its longest job, the
 *   quiesce timeout at most, or the boot and return timeouts) plus one backstop (and a bake, two polls, two trigger passes): a lost firing
 *   costs at most a backstop.
 * Each applies only where it can be judged: the process ended of itself (not killed for good, nor over a budget).
 */
export type SiteEventInvariant = 'site-triggers-cleared' | 'second-delivery-changes-nothing' | 'site-events-counted-once' | 'waits-bounded';

export function checkSiteEventInvariants(
  run: ScenarioRun,
  facts: { processEnded: boolean; settled: boolean; stopsAndCancels: number },
  add: (invariant: SiteEventInvariant, text: string) => void,
): void {
  const record = run.siteEvents;
  if (!record) return;
  const { scenario } = run;
  if (facts.processEnded && facts.settled && record.triggersLeft.length > 0) {
    const said = (run.report?.messageLog ?? []).filter((m) => m.text.startsWith('Site triggers')).map((m) => `'${m.text.slice(0, 60)}…'`);
    add(
      'site-triggers-cleared',
      `the session ended ${run.report?.state ?? '?'} but strigger --get still lists ${record.triggersLeft.map((t) => `#${t.id} ${t.event} ${t.resId}`).join(', ')} (the session said ${said.join(', ') || 'nothing of them'})`,
    );
  }
  for (const second of record.secondDeliveries) {
    if (second.error) add('second-delivery-changes-nothing', `firing ${second.id} delivered again was refused: ${second.error}`);
    else if (second.intake && (second.intake.recorded || second.intake.woke))
      add(
        'second-delivery-changes-nothing',
        `firing ${second.id} delivered again was ${second.intake.recorded ? 'recorded again' : 'taken'}${second.intake.woke ? ' and woke the workflow' : ''}`,
      );
  }
  if ((record.delivered > 0 && record.counted === 0) || record.counted > record.delivered + facts.stopsAndCancels)
    add(
      'site-events-counted-once',
      `the session counted ${record.counted} site event(s) for ${record.delivered} distinct firing(s) recorded (${record.secondDeliveries.length} delivered twice, ${facts.stopsAndCancels} stop/cancel)`,
    );
  if (!facts.processEnded || scenario.request.maintenanceWindows !== undefined) return;
  const request = scenario.request;
  const poll = Number(request.pollIntervalSeconds);
  const backstop = scenario.siteEvents?.backstopSeconds ?? BACKSTOP_POLLS * poll;
  // A quiesce wait lasts until the longest job of the request's nodes ends, its timeout at most (any job, when jobs keep arriving).
  const quiesce = Number(request.quiesceTimeoutSeconds);
  const longestJob = scenario.workload ? quiesce : Math.max(0, ...scenario.nodes.filter((n) => n.inRequest).map((n) => n.busySeconds ?? 0));
  const longestWait = Math.max(Math.min(quiesce, longestJob), Number(request.bootTimeoutSeconds) + Number(request.wlmReturnTimeoutSeconds));
  const bound = longestWait + backstop + Number(request.bakeSeconds ?? 0) + 2 * poll + (2 * TRIGGER_PASS_MS) / 1000;
  const end = run.startedAt + run.simulatedSeconds * 1000;
  const moments = [run.startedAt, ...run.site.changes.map((c) => c.at).filter((at) => at >= run.startedAt && at <= end), end].sort((a, b) => a - b);
  let longest = { from: 0, to: 0 };
  for (let i = 1; i < moments.length; i++) if (moments[i]! - moments[i - 1]! > longest.to - longest.from) longest = { from: moments[i - 1]!, to: moments[i]! };
  const seconds = (longest.to - longest.from) / 1000;
  if (seconds > bound)
    add(
      'waits-bounded',
      `the site stood still under the run for ${seconds} s (+${(longest.from - run.startedAt) / 1000}s to +${(longest.to - run.startedAt) / 1000}s), more than its longest wait ${longestWait} s plus a backstop of ${backstop} s (bound ${bound} s)`,
    );
}
