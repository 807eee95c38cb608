import { z } from 'zod';
import { parseOrThrow } from '../validation';
import { InvalidInputError } from '../errors';

export const WORKLOAD_MANAGER_TYPES = ['slurm'] as const;

const label = (field: string) => z.string({ error: `${field} is required` }).trim().min(1, `${field} must not be empty`);
const seconds = (field: string) =>
  z.number({ error: `${field} must be a number of seconds` }).int(`${field} must be a whole number of seconds`).min(1, `${field} must be at least 1`);

/**
 * The request that starts a rolling upgrade: CRUS's upgrade session fields in camelCase,
 * plus the timeouts and poll interval CRUS lacks. Plain JSON, so it can be pasted into the console.
 */
export const upgradeRequestSchema = z
  .strictObject({
    startingLabel: label('startingLabel'),
    upgradingLabel: label('upgradingLabel'),
    failedLabel: label('failedLabel'),
    upgradeStepSize: z
      .number({ error: 'upgradeStepSize is required and must be a whole number' })
      .int('upgradeStepSize must be a whole number')
      .min(1, 'upgradeStepSize must be at least 1'),
    upgradeTemplateId: label('upgradeTemplateId'),
    workloadManagerType: z.enum(WORKLOAD_MANAGER_TYPES, {
      error: `workloadManagerType must be one of: ${WORKLOAD_MANAGER_TYPES.join(', ')}`,
    }),
    /** Longest wait for a step's nodes to drain of jobs (CRUS: none). Default 24 h. */
    quiesceTimeoutSeconds: seconds('quiesceTimeoutSeconds').default(24 * 3600),
    /** Longest wait for the boot service to report every node of a step (CRUS: none). Default 1 h. */
    bootTimeoutSeconds: seconds('bootTimeoutSeconds').default(3600),
    /** Longest wait for booted nodes to return to service in the WLM (CRUS: 600 s). */
    wlmReturnTimeoutSeconds: seconds('wlmReturnTimeoutSeconds').default(600),
    /** How often the workflow polls the site while it waits. */
    pollIntervalSeconds: seconds('pollIntervalSeconds').default(30),
  })
  .superRefine((req, ctx) => {
    const labels = [
      ['startingLabel', req.startingLabel],
      ['upgradingLabel', req.upgradingLabel],
      ['failedLabel', req.failedLabel],
    ] as const;
    // Sharing a label would make CRUS empty the group it is upgrading from.
    for (let i = 0; i < labels.length; i++) {
      for (let j = i + 1; j < labels.length; j++) {
        if (labels[i]![1] === labels[j]![1]) {
          ctx.addIssue({
            code: 'custom',
            path: [labels[j]![0]],
            message: `${labels[j]![0]} must differ from ${labels[i]![0]} ('${labels[i]![1]}')`,
          });
        }
      }
    }
  });

export type UpgradeRequestInput = z.input<typeof upgradeRequestSchema>;
export type UpgradeRequest = z.output<typeof upgradeRequestSchema>;

export function parseUpgradeRequest(input: unknown): UpgradeRequest {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new InvalidInputError('upgrade request', [{ field: '', message: 'the request must be a JSON object' }]);
  }
  return parseOrThrow(upgradeRequestSchema, input, 'upgrade request');
}
