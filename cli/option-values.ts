import { timeScale as timeScaleSchema } from '../core/validation';
import { CliError } from './errors';
import { ExitCode } from './exit-codes';

/** Decimal numbers only: `16`, `-1`, `2.5`. `0x10`, `1e3`, `Infinity` and ` ` stay text, for the validation to refuse. */
const DECIMAL = /^-?\d+(\.\d+)?$/;

/**
 * A numeric option as a number; anything else is left as given, so that the request validation
 * names the field instead of the CLI guessing.
 */
export function numberOrRaw(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  return DECIMAL.test(value.trim()) ? Number(value) : value;
}

/** `--time-scale`: a decimal number above 0 and at most MAX_TIME_SCALE, or exit 2 naming the option. */
export function timeScaleOption(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = timeScaleSchema('--time-scale').safeParse(numberOrRaw(value));
  if (!parsed.success) {
    const reason = typeof numberOrRaw(value) === 'number' ? parsed.error.issues[0]!.message : '--time-scale must be a decimal number';
    throw new CliError(`${reason}, got '${value}'`, ExitCode.invalidInput);
  }
  return parsed.data;
}
