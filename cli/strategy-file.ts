import { readDocumentFile } from '../adapters/document-file';
import { InvalidInputError } from '../core/errors';
import { parseDeploymentStrategy, type DeploymentStrategy } from '../core/group-deployment';

/**
 * Reads and validates a DeploymentStrategy file (YAML or JSON). Returns the text too: the workflow
 * takes it as given and validates it again, as it would for a request from the console.
 */
export async function loadStrategyFile(path: string): Promise<{ text: string; strategy: DeploymentStrategy }> {
  const subject = `deployment strategy ${path}`;
  const text = await readDocumentFile(path, subject);
  try {
    return { text, strategy: parseDeploymentStrategy(text) };
  } catch (err) {
    if (err instanceof InvalidInputError) throw new InvalidInputError(subject, err.problems);
    throw err;
  }
}
