/** The CLI's exit statuses, as the README documents them. */
export const ExitCode = {
  /** The session completed (failed nodes included, as in CRUS). */
  completed: 0,
  /** The session could not complete (cancelled, or an error the workflow could not absorb). */
  notCompleted: 1,
  /** Invalid input: the message names the field or the problem; nothing was touched. */
  invalidInput: 2,
} as const;
