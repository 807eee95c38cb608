/** A CloudFormation DefinitionSubstitutions placeholder: `${Name}`. */
const PLACEHOLDER = /\$\{(\w+)\}/g;

/** The placeholder names a definition uses, each once, sorted. */
export function aslPlaceholders(definition: string): string[] {
  return [...new Set(Array.from(definition.matchAll(PLACEHOLDER), (match) => match[1] as string))].sort();
}

/**
 * The substitutions for a definition, checked both ways: CloudFormation would leave an unmapped
 * `${...}` in the deployed workflow (it fails only when the Task runs), and a value no placeholder
 * uses means the ASL and the stack have drifted apart. Either fails the synth, naming the file.
 */
export function aslSubstitutions(source: string, definition: string, values: Readonly<Record<string, string>>): Record<string, string> {
  const placeholders = aslPlaceholders(definition);
  const missing = placeholders.filter((name) => !(name in values));
  const unused = Object.keys(values).filter((name) => !placeholders.includes(name));
  const problems = [
    ...(missing.length > 0 ? [`no value for ${missing.map((name) => `\${${name}}`).join(', ')}`] : []),
    ...(unused.length > 0 ? [`no placeholder for ${unused.join(', ')}`] : []),
  ];
  if (problems.length > 0) throw new Error(`${source}: ${problems.join('; ')}`);
  return Object.fromEntries(placeholders.map((name) => [name, values[name] as string]));
}
