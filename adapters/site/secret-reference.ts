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
 * The token a profile refers to. A secret named by ARN is read from Secrets Manager when the
 * connector is built (a Lambda's cold start), never copied into configuration.
 */
export async function resolveSecretReference(reference: SecretReference, field: string, options: SecretResolution & { forceFetch?: boolean } = {}): Promise<string> {
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
 * The token a reference names, read now (a secret that cannot be read fails the build of the
 * connector, naming `field`); a secret's token is then read again every SECRET_MAX_AGE_SECONDS and
 * after the site refused it, so that a rotation reaches a warm Lambda.
 */
export async function secretToken(reference: SecretReference, field: string, options: SecretResolution = {}): Promise<Token> {
  const first = await resolveSecretReference(reference, field, options);
  if (reference.secretArn === undefined) return first;
  let fresh: string | undefined = first;
  return secretTokenSource(async (forceFetch) => {
    // The value read to check the reference is the first one used.
    const value = fresh ?? (await resolveSecretReference(reference, field, { ...options, forceFetch }));
    fresh = undefined;
    return value;
  });
}

async function getSecretString(arn: string, options: { maxAge: number; forceFetch: boolean }): Promise<string | undefined> {
  // Loaded only when a profile names a secret: the CLI does not pay for the SDK otherwise.
  const { getSecret } = await import('@aws-lambda-powertools/parameters/secrets');
  const value = await getSecret(arn, options);
  return typeof value === 'string' ? value : undefined;
}
