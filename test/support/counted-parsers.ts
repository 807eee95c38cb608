/**
 * Imported first by a test file (before anything that loads core): every caller of the request parsers
 * (an upgrade's, a deployment's, a strategy's) then reaches a counting wrapper of the real one, so the
 * test can count how often a request is parsed on its way (jest.mocked(parseUpgradeRequest).mock.calls).
 */
jest.mock('../../core/rolling-upgrade/upgrade-request', () => {
  const actual = jest.requireActual('../../core/rolling-upgrade/upgrade-request');
  return { ...actual, parseUpgradeRequest: jest.fn(actual.parseUpgradeRequest) };
});
jest.mock('../../core/group-deployment/deployment-request', () => {
  const actual = jest.requireActual('../../core/group-deployment/deployment-request');
  return { ...actual, parseDeploymentRequest: jest.fn(actual.parseDeploymentRequest) };
});
jest.mock('../../core/group-deployment/parse-strategy', () => {
  const actual = jest.requireActual('../../core/group-deployment/parse-strategy');
  return { ...actual, parseDeploymentStrategy: jest.fn(actual.parseDeploymentStrategy) };
});

export {};
