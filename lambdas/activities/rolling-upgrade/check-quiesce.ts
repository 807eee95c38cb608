import { shortList } from '../../../core/text';
import { isQuiet } from '../../../core/rolling-upgrade/wlm-readiness';
import { FailureReason } from '../../../core/rolling-upgrade/session';
import { activeNodes, failNodes, loadStepNodes } from './node-actions';
import { enterStage, type StageBody } from './stage-runner';
import { nextStep } from './start-step';

/** QUIESCING: wait until every step node is drained of jobs; past the quiesce timeout, fail the busy ones and go on. */
export const checkQuiesce: StageBody = async ({ session, progress, deps, now }) => {
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  const wlm = await deps.site.workloadManager.getNodes(nodes.map((n) => n.name));
  const busy = nodes.filter((n) => {
    const state = wlm.get(n.name);
    return !state || !isQuiet(state);
  });
  if (busy.length === 0) {
    return {
      progress: enterStage('QUIESCED', progress.step, now),
      waitSeconds: 0,
      message: `Step ${progress.step}: ${nodes.length} node(s) quiesced`,
    };
  }
  if (now - progress.stageStartedAt < session.quiesceTimeoutSeconds * 1000) {
    return { progress, waitSeconds: session.pollIntervalSeconds };
  }
  await failNodes(deps, session, busy, FailureReason.quiesceTimeout);
  const message = `Step ${progress.step}: ${busy.length} node(s) still busy after ${session.quiesceTimeoutSeconds} s failed: ${shortList(busy.map((n) => n.name))}`;
  if (busy.length === nodes.length) return { ...nextStep(progress.step, now), message };
  return { progress: enterStage('QUIESCED', progress.step, now), waitSeconds: 0, message };
};
