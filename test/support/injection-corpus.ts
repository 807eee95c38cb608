/** Values that must never reach a command line or a URL. */
export const INJECTION_CORPUS = [
  '; rm -rf /', 'n1; rm -rf /', '$(id)', 'n1$(id)', '`id`', 'n1\nreboot', 'n1\r', 'n1\0', '--help', '-n', '../etc', '..', '.',
  "n1'", 'n1"', 'n 1', 'n1|sh', 'n1&', 'n1>x', 'nіd001', 'ｎ1', '',
];
