import { shortList } from '../../../core/text';
import { SiteServiceError } from '../../../core/errors';
import { FailureReason, type NodeRecord } from '../../../core/rolling-upgrade/session';
import { activeNodes, failNodes, loadStepNodes } from './node-actions';
import { enterStage, type StageBody } from './stage-runner';
import { nextStep } from './start-step';

/**
 * BOOTED: judge each node by the boot service's own report (CRUS judged the session as a whole):
 * nodes whose boot failed are FAILED with `upgrading-boot-session-failed`, nodes that never
 * reported with `upgrading-time-out-booting`; the rest go on to WLM_WAITING.
 */
export const evaluateBoot: StageBody = async ({ session, progress, deps, now }) => {
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  const boot = await deps.site.bootService.getSession(progress.bootSessionName!);
  if (!boot) throw new SiteServiceError('boot-service', `boot session ${progress.bootSessionName} is not known to the boot service`);

  const booted: NodeRecord[] = [];
  const bootFailed: NodeRecord[] = [];
  const neverReported: NodeRecord[] = [];
  for (const node of nodes) {
    const outcome = boot.error ? 'failed' : boot.nodes[node.name];
    if (outcome === 'succeeded') booted.push(node);
    else if (outcome === 'failed' || outcome === undefined) bootFailed.push(node);
    else neverReported.push(node);
  }
  await failNodes(deps, session, bootFailed, FailureReason.bootFailed);
  await failNodes(deps, session, neverReported, FailureReason.bootTimeout);
  await deps.store.putNodes(
    session.upgradeId,
    booted.map((n): NodeRecord => ({ name: n.name, index: n.index, status: 'IN_PROGRESS', phase: 'BOOTED' })),
  );

  const failedNames = [...bootFailed, ...neverReported].map((n) => n.name);
  const message =
    `Step ${progress.step}: ${booted.length} node(s) booted` +
    (failedNames.length > 0 ? `, ${failedNames.length} failed to boot: ${shortList(failedNames)}` : '') +
    (boot.error ? ` (boot session error: ${boot.error})` : '');
  if (booted.length === 0) return { ...nextStep(progress.step, now), message };
  return {
    progress: enterStage('WLM_WAITING', progress.step, now, {
      bootRequestedAt: progress.bootRequestedAt!,
      bootSessionName: progress.bootSessionName!,
      bootFinishedAt: progress.bootFinishedAt ?? now,
    }),
    waitSeconds: 0,
    message,
  };
};
