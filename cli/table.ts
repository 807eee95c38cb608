/**
 * The one way the CLI prints a table: a header row of capitals, then the rows, each column as wide
 * as its widest cell and two spaces apart (the last column is not padded, so no line ends in spaces).
 */
export function renderTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? '').length)));
  return [header, ...rows]
    .map((row) =>
      header
        .map((_, i) => (i === header.length - 1 ? (row[i] ?? '') : (row[i] ?? '').padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
