import { HostlistError, chunkHostlist, compressHostlist, expandHostlist } from '../../../core/site/hostlist';

describe('expandHostlist', () => {
  it.each([
    ['nid001', ['nid001']],
    ['nid[001-003,010]', ['nid001', 'nid002', 'nid003', 'nid010']],
    ['n[8-10]', ['n8', 'n9', 'n10']],
    ['n[08-10]', ['n08', 'n09', 'n10']],
    ['x3000c0s[1-2]b0n[0-1]', ['x3000c0s1b0n0', 'x3000c0s1b0n1', 'x3000c0s2b0n0', 'x3000c0s2b0n1']],
    ['a1,b[2-3],c', ['a1', 'b2', 'b3', 'c']],
    ['rack[1-2]-node', ['rack1-node', 'rack2-node']],
  ])('%s', (expression, names) => {
    expect(expandHostlist(expression)).toEqual(names);
  });

  it.each([
    ['n[1-', 'unmatched ['],
    ['n1]', 'unmatched ]'],
    ['n[[1]]', 'nested brackets'],
    ['n[]', 'empty brackets'],
    ['n[3-1]', 'runs backwards'],
    ['n[a-b]', "bad range 'a-b'"],
    ['a,,b', 'empty name'],
    ['n[0-99999999]', 'more than'],
  ])('rejects %s', (expression, detail) => {
    expect(() => expandHostlist(expression)).toThrow(HostlistError);
    expect(() => expandHostlist(expression)).toThrow(detail);
  });
});

describe('compressHostlist', () => {
  it.each([
    [['nid001', 'nid002', 'nid003', 'nid010'], 'nid[001-003,010]'],
    [['n9', 'n10', 'n11'], 'n[9-11]'],
    [['n01', 'n09', 'n10'], 'n[01,09-10]'],
    [['x3000c0s1b0n0', 'x3000c0s1b0n1', 'x3000c0s2b0n0', 'x3000c0s2b0n1', 'x3000c0s3b0n0', 'x3000c0s3b0n1'], 'x3000c0s[1-3]b0n[0-1]'],
    [['login', 'nid002', 'nid001'], 'login,nid[001-002]'],
    [['n1', 'n1'], 'n1'],
    [['n1', 'n01'], 'n[1,01]'],
  ])('%j → %s', (names, expression) => {
    expect(compressHostlist(names)).toBe(expression);
    expect(new Set(expandHostlist(expression))).toEqual(new Set(names));
  });

  it('round-trips mixed padding, gaps and several fields', () => {
    const names = [
      ...Array.from({ length: 40 }, (_, i) => `nid${String(i * 3).padStart(6, '0')}`),
      ...Array.from({ length: 12 }, (_, i) => `x${3000 + (i % 2)}c0s${i % 3}b0n${i % 2}`),
      'gpu9',
      'gpu10',
      'gpu011',
      'head',
      'login-1',
      'login-2',
    ];
    const expression = compressHostlist(names);
    expect(expression.length).toBeLessThan(names.join(',').length);
    expect(expandHostlist(expression).sort()).toEqual([...new Set(names)].sort());
  });

  it('folds 10,000 names into one short expression and back', () => {
    const names = Array.from({ length: 10_000 }, (_, i) => `nid${String(i + 1).padStart(6, '0')}`);
    const expression = compressHostlist(names);
    expect(expression).toBe('nid[000001-010000]');
    expect(expandHostlist(expression)).toEqual(names);
  });

  it('round-trips 10,000 xnames over four fields', () => {
    const names: string[] = [];
    for (let c = 0; c < 8; c++) for (let s = 0; s < 25; s++) for (let b = 0; b < 25; b++) for (let n = 0; n < 2; n++) names.push(`x3000c${c}s${s}b${b}n${n}`);
    const expression = compressHostlist(names);
    expect(expression).toBe('x3000c[0-7]s[0-24]b[0-24]n[0-1]');
    expect(expandHostlist(expression)).toEqual(names);
  });
});

describe('chunkHostlist', () => {
  it('keeps at most maxNames names per expression, in order', () => {
    const names = Array.from({ length: 250 }, (_, i) => `n${i}`);
    expect(chunkHostlist(names, 100)).toEqual(['n[0-99]', 'n[100-199]', 'n[200-249]']);
  });
});
