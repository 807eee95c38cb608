import { describeCommand, type CommandSpec } from './command-spec';
import { rolloutProgram } from './program';

/** The description of the `rollout` program that the build writes beside the compiled CLI. */
export const programSpec = (): CommandSpec => describeCommand(rolloutProgram());
