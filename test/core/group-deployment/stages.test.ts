import { IllegalStageTransitionError } from '../../../core/errors';
import { DEPLOYMENT_STAGES, canTransition, isSuccessfulAfter, stageAfter, transitionStage, type DeploymentStage } from '../../../core/group-deployment/stages';
import { thrownBy } from '../../support/deployment-runs';

describe('stage transitions', () => {
  const legal: [DeploymentStage, DeploymentStage][] = [
    ['NOT_STARTED', 'PREPARED'],
    ['PREPARED', 'DEPLOYED'],
    ['NOT_STARTED', 'FAILED'],
    ['PREPARED', 'FAILED'],
  ];

  it('allows exactly NOT_STARTED→PREPARED→DEPLOYED and NOT_STARTED|PREPARED→FAILED', () => {
    for (const from of DEPLOYMENT_STAGES) {
      for (const to of DEPLOYMENT_STAGES) {
        const expected = legal.some(([f, t]) => f === from && t === to);
        expect([from, to, canTransition(from, to)]).toEqual([from, to, expected]);
      }
    }
  });

  it('returns the new stage of a legal move', () => {
    expect(transitionStage('group a', 'NOT_STARTED', 'PREPARED')).toBe('PREPARED');
  });

  it('rejects an illegal move with a typed error naming the subject', () => {
    const err = thrownBy(() => transitionStage('node n1', 'DEPLOYED', 'FAILED'));
    expect(err).toBeInstanceOf(IllegalStageTransitionError);
    expect(err).toMatchObject({ name: 'IllegalStageTransitionError', subject: 'node n1', from: 'DEPLOYED', to: 'FAILED' });
    expect((err as Error).message).toBe('node n1 cannot move from DEPLOYED to FAILED');
  });

  it('rejects skipping PREPARED and staying put (a replayed result)', () => {
    expect(() => transitionStage('group a', 'NOT_STARTED', 'DEPLOYED')).toThrow(IllegalStageTransitionError);
    expect(() => transitionStage('group a', 'FAILED', 'FAILED')).toThrow(IllegalStageTransitionError);
  });
});

describe('phase helpers', () => {
  it('maps each phase to the stage its success leads to', () => {
    expect(stageAfter('PREPARE')).toBe('PREPARED');
    expect(stageAfter('DEPLOY')).toBe('DEPLOYED');
  });

  it('counts PREPARED as success after PREPARE only, DEPLOYED after both', () => {
    expect(DEPLOYMENT_STAGES.filter((s) => isSuccessfulAfter('PREPARE', s))).toEqual(['PREPARED', 'DEPLOYED']);
    expect(DEPLOYMENT_STAGES.filter((s) => isSuccessfulAfter('DEPLOY', s))).toEqual(['DEPLOYED']);
  });
});
