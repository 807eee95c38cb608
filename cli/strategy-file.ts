import { readFile } from 'node:fs/promises';
import { decodeDocumentBytes } from '../core/document-text';
import { describeError, InvalidInputError } from '../core/errors';
import { parseDeploymentStrategy, type DeploymentStrategy } from '../core/group-deployment';

/**
 * Reads and validates a DeploymentStrategy file (YAML or JSON). Returns the text too: the workflow
 * takes it as given and validates it again, as it would for a request from the console.
 */
export async function loadStrategyFile(path: string): Promise<{ text: string; strategy: DeploymentStrategy }> {
  const subject = `deployment strategy ${path}`;
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (err) {
    throw new InvalidInputError(subject, [{ field: '', message: `cannot read it: ${describeError(err)}` }]);
  }
  const decoded = decodeDocumentBytes(bytes);
  if ('problems' in decoded) throw new InvalidInputError(subject, decoded.problems);
  const { text } = decoded;
  try {
    return { text, strategy: parseDeploymentStrategy(text) };
  } catch (err) {
    if (err instanceof InvalidInputError) throw new InvalidInputError(subject, err.problems);
    throw err;
  }
}
