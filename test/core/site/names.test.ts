import { InvalidInputError } from '../../../core/errors';
import { InvalidNameError, validLabel, validNodeName, validReason, validTemplate } from '../../../core/site/names';
import { INJECTION_CORPUS } from '../../support/injection-corpus';

describe('name validation', () => {
  it.each(INJECTION_CORPUS)('rejects %j as a node name, label and template, naming the field and value', (value) => {
    for (const check of [validNodeName, validLabel, validTemplate]) {
      let err: unknown;
      try {
        check(value, 'nodes[2]');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidNameError);
      expect(err).toBeInstanceOf(InvalidInputError);
      expect((err as InvalidNameError).problems[0]!.field).toBe('nodes[2]');
      expect((err as Error).message).toContain(JSON.stringify(value));
    }
  });

  it.each(['$(id)', '`id`', 'a\nb', "it's", 'a"b', 'a;b', 'a|b', '-x', ''])('rejects %j as a reason', (value) => {
    expect(() => validReason(value)).toThrow(InvalidNameError);
  });

  it.each(['nid001', 'x3000c0s1b0n0', 'node-1.cluster.local', 'n_1'])('accepts node name %s', (name) => {
    expect(validNodeName(name)).toBe(name);
  });

  it('accepts labels, templates and reasons as sites write them', () => {
    expect(validLabel('rack=x3000')).toBe('rack=x3000');
    expect(validTemplate('cos-2.4:latest')).toBe('cos-2.4:latest');
    expect(validTemplate('repo/rocky-9.4')).toBe('repo/rocky-9.4');
    expect(() => validTemplate('repo/../x')).toThrow(/'\.\.' is not allowed/);
    expect(validReason('upgrading-time-out-wlm-waiting')).toBe('upgrading-time-out-wlm-waiting');
    expect(() => validNodeName('n'.repeat(65))).toThrow(InvalidNameError);
  });
});
