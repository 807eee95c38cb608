/** `a, b, c, d, e and 7 more`: lists of names in messages stay readable whatever the fleet size. */
export function shortList(names: readonly string[], max = 5): string {
  return names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')} and ${names.length - max} more`;
}
