/**
 * The `${Name}` placeholders of the ASL files (CloudFormation DefinitionSubstitutions), resolved one
 * way for CDK and the embedded engine alike.
 */
const PLACEHOLDER = /\$\{(\w+)\}/g;

export const functionArnPlaceholder = (functionName: string) => `${functionName}FunctionArn`;
export const stateMachineArnPlaceholder = (machineName: string) => `${machineName}StateMachineArn`;

/** The placeholder names a definition uses, each once, sorted. */
export function aslPlaceholders(definition: string): string[] {
  return [...new Set(Array.from(definition.matchAll(PLACEHOLDER), (match) => match[1] as string))].sort();
}

/** Thrown when the values and a definition's placeholders disagree; the message names the file. */
export class PlaceholderMismatchError extends Error {
  override readonly name = 'PlaceholderMismatchError';
}

/**
 * The substitutions for a definition, checked both ways: CloudFormation would leave an unmapped
 * `${...}` in the deployed workflow (it fails only when the Task runs), and a value no placeholder
 * uses means the ASL and its caller have drifted apart. Either fails, naming the file.
 */
export function aslSubstitutions(source: string, definition: string, values: Readonly<Record<string, string>>): Record<string, string> {
  const placeholders = aslPlaceholders(definition);
  const missing = placeholders.filter((name) => !(name in values));
  const unused = Object.keys(values).filter((name) => !placeholders.includes(name));
  const problems = [
    ...(missing.length > 0 ? [`no value for ${missing.map((name) => `\${${name}}`).join(', ')}`] : []),
    ...(unused.length > 0 ? [`no placeholder for ${unused.join(', ')}`] : []),
  ];
  if (problems.length > 0) throw new PlaceholderMismatchError(`${source}: ${problems.join('; ')}`);
  return Object.fromEntries(placeholders.map((name) => [name, values[name] as string]));
}

/** The definition with its placeholders replaced, as CloudFormation does it (checked as aslSubstitutions checks). */
export function resolvePlaceholders(source: string, definition: string, values: Readonly<Record<string, string>>): string {
  const substitutions = aslSubstitutions(source, definition, values);
  return definition.replace(PLACEHOLDER, (_whole, name: string) => substitutions[name] as string);
}

/** The values of a machine's placeholders: each function's ARN and each child machine's ARN. */
export function placeholderValues(
  functions: readonly string[],
  children: readonly string[],
  arns: { functionArn(name: string): string; stateMachineArn(name: string): string },
): Record<string, string> {
  return {
    ...Object.fromEntries(functions.map((name) => [functionArnPlaceholder(name), arns.functionArn(name)])),
    ...Object.fromEntries(children.map((name) => [stateMachineArnPlaceholder(name), arns.stateMachineArn(name)])),
  };
}
