/**
 * A numeric option as a number; anything else is left as given, so that the request validation
 * names the field instead of the CLI guessing.
 */
export function numberOrRaw(value: string | undefined): number | string | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  return value.trim() !== '' && Number.isFinite(n) ? n : value;
}
