/** The one quoting function for command arguments: POSIX single quotes, `'` written as `'\''`. */
export function shellQuote(arg: string): string {
  if (arg.includes('\0')) throw new Error('a NUL byte cannot travel in a shell argument');
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** A command line from argv, every word quoted. */
export function shellCommand(argv: readonly string[]): string {
  return argv.map(shellQuote).join(' ');
}

/**
 * Fills a command template such as `wwctl node set --image {template} {nodes}`: each `{key}` becomes
 * the quoted value, so the template's own words stay as the operator wrote them and values stay one word.
 */
export function fillTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    const value = values[key];
    if (value === undefined)
      throw new Error(
        `command template ${JSON.stringify(template)} uses {${key}}, which is not one of ${Object.keys(values)
          .map((k) => `{${k}}`)
          .join(', ')}`,
      );
    return shellQuote(value);
  });
}
