/**
 * Splits one simple shell command into words the way /bin/sh would (single quotes, double quotes,
 * backslashes), without evaluating anything: the simulated head node runs only commands it knows.
 * Anything a shell would expand or redirect (`;`, `|`, `&`, `<`, `>`, `$`, backticks, parentheses,
 * globs outside quotes) is refused: undefined.
 */
export function shellWords(script: string): string[] | undefined {
  const words: string[] = [];
  let word: string | undefined;
  const push = (text: string) => {
    word = (word ?? '') + text;
  };
  for (let i = 0; i < script.length; i++) {
    const c = script[i]!;
    if (c === "'") {
      const end = script.indexOf("'", i + 1);
      if (end < 0) return undefined;
      push(script.slice(i + 1, end));
      i = end;
    } else if (c === '"') {
      let text = '';
      for (i++; i < script.length && script[i] !== '"'; i++) {
        const d = script[i]!;
        if (d === '$' || d === '`') return undefined;
        if (d === '\\' && i + 1 < script.length && '"\\$`\n'.includes(script[i + 1]!)) text += script[++i];
        else text += d;
      }
      if (i >= script.length) return undefined;
      push(text);
    } else if (c === '\\') {
      if (i + 1 >= script.length) return undefined;
      push(script[++i]!);
    } else if (c === ' ' || c === '\t' || c === '\n') {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (';|&<>()$`*?[]{}#~!'.includes(c)) {
      return undefined;
    } else {
      push(c);
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}
