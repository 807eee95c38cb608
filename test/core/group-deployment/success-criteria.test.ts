import { countPhaseSuccesses, evaluateSuccessCriteria, successPercentForDisplay } from '../../../core/group-deployment/success-criteria';
import type { DeploymentStage } from '../../../core/group-deployment/stages';

describe('evaluateSuccessCriteria', () => {
  it('always succeeds without criteria, or with an empty criteria mapping', () => {
    expect(evaluateSuccessCriteria(undefined, { total: 10, succeeded: 0 })).toEqual([]);
    expect(evaluateSuccessCriteria({}, { total: 10, succeeded: 0 })).toEqual([]);
  });

  describe('percent_successful_nodes, decided exactly', () => {
    it("meets 29% with 29 of 100 (Shipyard's float check fails it)", () => {
      expect((29 / 100) * 100 >= 29).toBe(false); // the float comparison Shipyard makes
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 29 }, { total: 100, succeeded: 29 })).toEqual([]);
    });

    it('fails 29% with 28 of 100', () => {
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 29 }, { total: 100, succeeded: 28 })).toEqual([
        { criteria: 'percent_successful_nodes', needed: 29, actual: 28 },
      ]);
    });

    it("meets 75% with 3 of 4 and fails it with 2 of 4 (the seed's example)", () => {
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 75 }, { total: 4, succeeded: 3 })).toEqual([]);
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 75 }, { total: 4, succeeded: 2 })).toHaveLength(1);
    });

    it('fails 67% with 2 of 3, displaying 66.66 rather than a rounded-up 66.67', () => {
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 67 }, { total: 3, succeeded: 2 })).toEqual([
        { criteria: 'percent_successful_nodes', needed: 67, actual: 66.66 },
      ]);
    });

    it('meets 100% only when every node succeeded, and 0% always', () => {
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 100 }, { total: 1000, succeeded: 999 })[0]?.actual).toBe(99.9);
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 100 }, { total: 1000, succeeded: 1000 })).toEqual([]);
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 0 }, { total: 5, succeeded: 0 })).toEqual([]);
    });
  });

  describe('a group with no nodes', () => {
    it('counts as 100% successful', () => {
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 100 }, { total: 0, succeeded: 0 })).toEqual([]);
      expect(successPercentForDisplay({ total: 0, succeeded: 0 })).toBe(100);
    });

    it('has 0 successes, so a minimum of 1 fails it', () => {
      expect(evaluateSuccessCriteria({ percentSuccessfulNodes: 90, minimumSuccessfulNodes: 1 }, { total: 0, succeeded: 0 })).toEqual([
        { criteria: 'minimum_successful_nodes', needed: 1, actual: 0 },
      ]);
    });

    it('has 0 failures, so maximum_failed_nodes 0 holds', () => {
      expect(evaluateSuccessCriteria({ maximumFailedNodes: 0 }, { total: 0, succeeded: 0 })).toEqual([]);
    });
  });

  it('checks minimum_successful_nodes at its boundary', () => {
    expect(evaluateSuccessCriteria({ minimumSuccessfulNodes: 3 }, { total: 5, succeeded: 3 })).toEqual([]);
    expect(evaluateSuccessCriteria({ minimumSuccessfulNodes: 3 }, { total: 5, succeeded: 2 })).toEqual([
      { criteria: 'minimum_successful_nodes', needed: 3, actual: 2 },
    ]);
  });

  it('checks maximum_failed_nodes 0: one failure is too many', () => {
    expect(evaluateSuccessCriteria({ maximumFailedNodes: 0 }, { total: 5, succeeded: 5 })).toEqual([]);
    expect(evaluateSuccessCriteria({ maximumFailedNodes: 0 }, { total: 5, succeeded: 4 })).toEqual([
      { criteria: 'maximum_failed_nodes', needed: 0, actual: 1 },
    ]);
  });

  it('evaluates each criterion present and reports every one that fails', () => {
    const criteria = { percentSuccessfulNodes: 90, minimumSuccessfulNodes: 3, maximumFailedNodes: 1 };
    expect(evaluateSuccessCriteria(criteria, { total: 4, succeeded: 2 })).toEqual([
      { criteria: 'percent_successful_nodes', needed: 90, actual: 50 },
      { criteria: 'minimum_successful_nodes', needed: 3, actual: 2 },
      { criteria: 'maximum_failed_nodes', needed: 1, actual: 2 },
    ]);
    expect(evaluateSuccessCriteria(criteria, { total: 10, succeeded: 9 })).toEqual([]);
  });
});

describe('countPhaseSuccesses', () => {
  const stages: Record<string, DeploymentStage> = { a: 'NOT_STARTED', b: 'PREPARED', c: 'DEPLOYED', d: 'FAILED' };
  const stageOf = (node: string) => stages[node] ?? 'NOT_STARTED';

  it('after PREPARE counts PREPARED and DEPLOYED nodes', () => {
    expect(countPhaseSuccesses(['a', 'b', 'c', 'd'], stageOf, 'PREPARE')).toEqual({ total: 4, succeeded: 2 });
  });

  it('after DEPLOY counts only DEPLOYED nodes', () => {
    expect(countPhaseSuccesses(['a', 'b', 'c', 'd'], stageOf, 'DEPLOY')).toEqual({ total: 4, succeeded: 1 });
  });
});
