import type { NodeRecord } from '../../../core/rolling-upgrade/session';
import { activeNodes, loadStepNodes } from './node-actions';
import { enterStage, type StageBody } from './stage-runner';
import { nextStep } from './start-step';

/** Boot sessions are named after the session and step, so a retried start finds the one already made. */
export function bootSessionName(upgradeId: string, step: number): string {
  return `rollout-${upgradeId}-step-${step}`;
}

/**
 * QUIESCED: empty the upgrading group, put the step's nodes in it and start a reboot limited to it.
 * The boot request time is saved before the boot starts: a node counts as rebooted only if it
 * registered after it.
 */
export const bootStep: StageBody = async ({ session, progress, deps, now }) => {
  const { site, store } = deps;
  const nodes = activeNodes(await loadStepNodes(deps, session, progress.step));
  if (nodes.length === 0) return nextStep(progress.step, now);
  const names = nodes.map((n) => n.name);

  let current = progress;
  if (current.bootRequestedAt === undefined || current.bootSessionName === undefined) {
    current = { ...progress, bootRequestedAt: now, bootSessionName: bootSessionName(session.upgradeId, progress.step) };
    await store.saveProgress(session.upgradeId, progress, current);
  }
  const members = await site.inventory.getGroupMembers(session.upgradingLabel);
  const strangers = members.filter((m) => !names.includes(m));
  if (strangers.length > 0) await site.inventory.removeGroupMembers(session.upgradingLabel, strangers);
  await site.inventory.addGroupMembers(session.upgradingLabel, names);

  await site.bootService.createSession({
    name: current.bootSessionName!,
    operation: 'reboot',
    templateName: session.upgradeTemplateId,
    limit: session.upgradingLabel,
  });
  await store.putNodes(
    session.upgradeId,
    nodes.map((n): NodeRecord => ({ name: n.name, index: n.index, status: 'IN_PROGRESS', phase: 'BOOTING' })),
  );
  return {
    progress: enterStage('BOOTING', progress.step, now, {
      bootRequestedAt: current.bootRequestedAt!,
      bootSessionName: current.bootSessionName!,
    }),
    waitSeconds: session.pollIntervalSeconds,
    message: `Step ${progress.step}: boot session ${current.bootSessionName} started for ${nodes.length} node(s) with template ${session.upgradeTemplateId}`,
  };
};
