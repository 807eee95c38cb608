import { decodeDocumentBytes, parseDocumentText, parseYamlDocuments } from '../../core/document-text';

const problemsOf = (result: object): string =>
  'problems' in result ? (result.problems as { field: string; message: string }[]).map((p) => `${p.field}: ${p.message}`).join('; ') : 'accepted';

describe('strict document text', () => {
  it.each<[string, 'json' | 'yaml', string, RegExp]>([
    ['a duplicate key in JSON', 'json', '{"a": 1, "a": 2}', /^a: duplicate key "a"/],
    ['a nested duplicate key in JSON', 'json', '{"x": [{"b": 1, "b": 1}]}', /^x\[0\]\.b: duplicate key "b"/],
    ['a whole number in exponent form in JSON', 'json', '{"n": 1e3}', /^n: "1e3" is not a decimal integer/],
    ['a comment in JSON', 'json', '{"a": 1 /* c */}', /invalid JSON/],
    ['a trailing comma in JSON', 'json', '{"a": 1,}', /invalid JSON/],
    ['a duplicate key in YAML', 'yaml', 'a: 1\na: 2\n', /Map keys must be unique at line 2/],
    ['a hex number in YAML', 'yaml', 'a:\n  - b: 0x10\n', /^a\[0\]\.b: "0x10" is not a decimal integer/],
    ['an octal number in YAML', 'yaml', 'a: 0o17\n', /^a: "0o17" is not a decimal integer/],
    ['a whole number in exponent form in YAML', 'yaml', 'a: 1e3\n', /^a: "1e3" is not a decimal integer/],
    ['two documents where one is expected', 'yaml', 'a: 1\n---\nb: 2\n', /holds 2 documents; expected one/],
    [
      'an alias bomb',
      'yaml',
      [
        'a: &a [x, x, x, x, x, x, x, x, x]',
        'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]',
        'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]',
        'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]',
      ].join('\n'),
      /aliases expand too far/,
    ],
  ])('refuses %s', (_case, format, text, message) => {
    expect(problemsOf(parseDocumentText(text, format))).toMatch(message);
  });

  it.each<[string, 'json' | 'yaml', string, unknown]>([
    ['fractions in exponent form', 'yaml', 'a: 2.5e-1\n', { a: 0.25 }],
    ['decimal integers', 'json', '{"a": 16, "b": -3, "c": 1.0}', { a: 16, b: -3, c: 1 }],
    ['a few aliases', 'yaml', 'a: &a [1]\nb: *a\n', { a: [1], b: [1] }],
  ])('accepts %s', (_case, format, text, value) => {
    expect(parseDocumentText(text, format)).toEqual({ value });
  });

  it('refuses bytes that are not UTF-8 and drops a BOM', () => {
    expect(problemsOf(decodeDocumentBytes(Uint8Array.from([0x61, 0xff])))).toBe(': is not UTF-8 text');
    expect(decodeDocumentBytes(Uint8Array.from([0xef, 0xbb, 0xbf, 0x61]))).toEqual({ text: 'a' });
  });

  it('reads every document of a stream, each checked', () => {
    expect(parseYamlDocuments('a: 1\n---\nb: 2\n')).toEqual({ values: [{ a: 1 }, { b: 2 }] });
    expect(problemsOf(parseYamlDocuments('a: 1\n---\nb: 0x2\n'))).toMatch(/^b: "0x2" is not a decimal integer/);
  });
});
