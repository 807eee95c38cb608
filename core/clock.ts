/** Source of the current time, in epoch milliseconds. Real on AWS; simulated (faster) on the embedded default. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
