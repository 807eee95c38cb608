/**
 * Reproducible randomness for simulated sites: a seeded PRNG per stream (mulberry32), streams
 * keyed by name so that a node's draws do not depend on what other nodes or requests did.
 */
export type Random = () => number;

/** FNV-1a of the text, mixed with the seed: the 32-bit seed of one named stream. */
function streamSeed(seed: number, name: string): number {
  let hash = 0x811c9dc5 ^ (seed >>> 0);
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Uniform in [0, 1), from mulberry32 (a small, well-mixed 32-bit generator). */
export function randomStream(seed: number, name: string): Random {
  let state = streamSeed(seed, name);
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Standard normal by Box-Muller (one of the pair; streams are cheap). */
export function normal(random: Random): number {
  const u = 1 - random(); // (0, 1]: log(0) would be -Infinity
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

export interface LognormalSpec {
  median: number;
  sigma: number;
  /** Draws above are capped at this value. */
  max: number;
}

export function lognormal(random: Random, { median, sigma, max }: LognormalSpec): number {
  return Math.min(max, median * Math.exp(sigma * normal(random)));
}

/** Exponential with the given mean. */
export function exponential(random: Random, mean: number): number {
  return -mean * Math.log(1 - random());
}

/** Mean of min(L, max) for L lognormal: e^(mu + s^2/2) Phi((ln max - mu - s^2)/s) + max (1 - Phi((ln max - mu)/s)). */
export function cappedLognormalMean({ median, sigma, max }: LognormalSpec): number {
  if (sigma === 0) return Math.min(median, max);
  const mu = Math.log(median);
  const logMax = Math.log(max);
  return Math.exp(mu + (sigma * sigma) / 2) * normalCdf((logMax - mu - sigma * sigma) / sigma) + max * (1 - normalCdf((logMax - mu) / sigma));
}

/** Standard normal CDF through erf (Abramowitz and Stegun 7.1.26, error below 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}
