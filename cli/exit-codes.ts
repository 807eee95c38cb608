/**
 * The CLI's exit statuses, as docs/guides/operate-a-run.md documents them: the one table every command uses. A run the
 * CLI starts or resumes and follows (`upgrade`, `deploy`, `deploy --graph`, `session resume`: cli/run-workflow.ts)
 * maps one outcome to one status, whatever its kind:
 *
 * | outcome                                                                        | status        |
 * |--------------------------------------------------------------------------------|---------------|
 * | ended as asked (an upgrade completed, failed nodes included; SUCCEEDED)         | completed     |
 * | FAILED, CANCELLED, STOPPED (a first Ctrl-C), HALTED, a workflow error           | notCompleted  |
 * | a resume of a run that has ended for good                                       | notCompleted  |
 * | a bad flag or file, the workflow's first state refusing the input, an unknown id | invalidInput |
 * | a client detached on Ctrl-C, or a second Ctrl-C left at once                    | interrupted   |
 */
export const ExitCode = {
  /** The session completed (failed nodes included, as in CRUS). */
  completed: 0,
  /** The session could not complete (cancelled, or an error the workflow could not absorb). */
  notCompleted: 1,
  /** Invalid input: the message names the field or the problem; nothing was touched. */
  invalidInput: 2,
  /** Interrupted before the end: a client that detached on Ctrl-C (128 + SIGINT, as shells report an interrupted command). */
  interrupted: 130,
} as const;

/** What each exit status means, in the words of docs/reference/cli.md (generated from this by `npm run docs:generate`). */
export const EXIT_CODE_MEANINGS: Record<keyof typeof ExitCode, string> = {
  completed: 'The session completed (failed nodes included, as in CRUS); any other command did what it was asked.',
  notCompleted:
    'The session could not complete: FAILED, CANCELLED, STOPPED (a first Ctrl-C), HALTED, a workflow error, or a resume of a run that has ended for good.',
  invalidInput:
    "Invalid input: a bad flag or file, the workflow's first state refusing the input, an unknown id. The message names the field or the problem; nothing was touched.",
  interrupted:
    'Interrupted before the end: a client that detached on Ctrl-C, or a second Ctrl-C that left at once (128 + SIGINT, as shells report an interrupted command).',
};
