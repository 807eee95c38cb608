import { aslPlaceholders, aslSubstitutions } from '../../contracts';

const definition = JSON.stringify({
  States: {
    A: { Parameters: { FunctionName: '${AFunctionArn}' } },
    B: { Parameters: { FunctionName: '${BFunctionArn}' } },
    C: { Parameters: { FunctionName: '${AFunctionArn}', 'StateMachineArn.$': '$$.StateMachine.Id' } },
  },
});

describe('aslPlaceholders', () => {
  it('lists each ${Name} once, sorted, and ignores JSONPath ($, $$)', () => {
    expect(aslPlaceholders(definition)).toEqual(['AFunctionArn', 'BFunctionArn']);
  });
});

describe('aslSubstitutions', () => {
  it('maps every placeholder to its value', () => {
    expect(aslSubstitutions('x.asl.json', definition, { BFunctionArn: 'arn:b', AFunctionArn: 'arn:a' })).toEqual({
      AFunctionArn: 'arn:a',
      BFunctionArn: 'arn:b',
    });
  });

  it('fails, naming the file and the placeholder, when a placeholder has no value', () => {
    expect(() => aslSubstitutions('x.asl.json', definition, { AFunctionArn: 'arn:a' })).toThrow('x.asl.json: no value for ${BFunctionArn}');
  });

  it('fails when a value has no placeholder (the ASL and the stack have drifted apart)', () => {
    expect(() => aslSubstitutions('x.asl.json', definition, { AFunctionArn: 'arn:a', BFunctionArn: 'arn:b', CFunctionArn: 'arn:c' })).toThrow(
      'x.asl.json: no placeholder for CFunctionArn',
    );
  });
});
