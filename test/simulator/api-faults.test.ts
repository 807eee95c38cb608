import { ApiFaults } from '../../simulator/api-faults';

describe('ApiFaults', () => {
  it('lets afterCalls matching calls through, then fails count of them', () => {
    const faults = new ApiFaults([{ service: 'inventory', status: 503, count: 2, afterCalls: 1 }]);
    const statuses = Array.from({ length: 5 }, () => faults.check('inventory', 'GET', '/hsm/v2/groups/a'));
    expect(statuses).toEqual([undefined, 503, 503, undefined, undefined]);
  });

  it('matches on service, method and path substring only', () => {
    const faults = new ApiFaults([{ service: 'boot-service', method: 'POST', path: '/sessions', status: 500, count: 1, afterCalls: 0 }]);
    expect(faults.check('inventory', 'POST', '/bos/v2/sessions')).toBeUndefined();
    expect(faults.check('boot-service', 'GET', '/bos/v2/sessions/a')).toBeUndefined();
    expect(faults.check('boot-service', 'POST', '/bos/v2/sessiontemplates')).toBeUndefined();
    expect(faults.check('boot-service', 'POST', '/bos/v2/sessions')).toBe(500);
  });

  it('counts a call against every rule it matches', () => {
    const faults = new ApiFaults([
      { service: 'provisioner', status: 500, count: 1, afterCalls: 0 },
      { service: 'provisioner', status: 503, count: 1, afterCalls: 1 },
    ]);
    expect([1, 2, 3].map(() => faults.check('provisioner', 'GET', '/x'))).toEqual([500, 503, undefined]);
  });
});
