import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { InvalidInputError, describeError } from '../../core/errors';
import type { SecretReference } from '../../core/site/site-profile';
import { SECRET_MAX_AGE_SECONDS, secretTokenSource, type Token } from './secret-token';

export interface SecretResolution {
  env?: NodeJS.ProcessEnv;
  /** Relative `file` paths start here. Default: the working directory. */
  baseDir?: string;
  /**
   * Reads a Secrets Manager secret's SecretString, from the cache while it is younger than `maxAge`
   * seconds unless `forceFetch`. Default: Powertools' SecretsProvider.
   */
  getSecret?: (arn: string, options: { maxAge: number; forceFetch: boolean }) => Promise<string | undefined>;
}

/**
 * The token a profile refers to, read now. A secret named by ARN is read from Secrets Manager (cached
 * for `maxAge` by Powertools), never copied into configuration.
 */
export async function resolveSecretReference(
  reference: SecretReference,
  field: string,
  options: SecretResolution & { forceFetch?: boolean } = {},
): Promise<string> {
  const fail = (message: string, cause?: unknown): never => {
    throw Object.assign(new InvalidInputError('site profile', [{ field, message }]), cause === undefined ? {} : { cause });
  };
  if (reference.env !== undefined) {
    const value = (options.env ?? process.env)[reference.env];
    return value?.trim() || fail(`environment variable ${reference.env} is not set`);
  }
  if (reference.file !== undefined) {
    const file = path.resolve(options.baseDir ?? process.cwd(), reference.file);
    let text = '';
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      fail(`cannot read ${file}: ${describeError(err)}`, err);
    }
    return text.trim() || fail(`${file} is empty`);
  }
  const arn = reference.secretArn!;
  let value: string | undefined;
  try {
    value = await (options.getSecret ?? getSecretString)(arn, { maxAge: SECRET_MAX_AGE_SECONDS, forceFetch: options.forceFetch === true });
  } catch (err) {
    fail(`cannot read secret ${arn}: ${describeError(err)}`, err);
  }
  return value?.trim() || fail(`secret ${arn} has no SecretString`);
}

/**
 * The token a reference names. A variable or a file is read now (naming `field` when it cannot be); a
 * secret is read when the connector first sends it, not when the connector is built, so that a function
 * reads only the secrets of the connectors it calls (the stack grants it only those), then again every
 * SECRET_MAX_AGE_SECONDS and after the site refused it, so that a rotation reaches a warm Lambda. A secret
 * that cannot be read fails that first call, naming `field`.
 */
export async function secretToken(reference: SecretReference, field: string, options: SecretResolution = {}): Promise<Token> {
  if (reference.secretArn === undefined) return resolveSecretReference(reference, field, options);
  return secretTokenSource((forceFetch) => resolveSecretReference(reference, field, { ...options, forceFetch }));
}

async function getSecretString(arn: string, options: { maxAge: number; forceFetch: boolean }): Promise<string | undefined> {
  // Loaded only when a profile names a secret: the CLI does not pay for the SDK otherwise.
  const { getSecret } = await import('@aws-lambda-powertools/parameters/secrets');
  const value = await getSecret(arn, options);
  return typeof value === 'string' ? value : undefined;
}
