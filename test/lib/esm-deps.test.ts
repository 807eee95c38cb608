import middy from '@middy/core';
import pLimit from 'p-limit';

// Guards the jest set-up: the ESM-only dependencies load under the CommonJS test transform.
describe('ESM-only dependencies under jest', () => {
  it('runs a middy handler', async () => {
    const handler = middy(async (event: { n: number }) => event.n * 2);
    await expect(handler({ n: 21 }, {} as never)).resolves.toBe(42);
  });
  it('bounds concurrency with p-limit', async () => {
    const limit = pLimit(2);
    let running = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 6 }, () =>
        limit(async () => {
          running++;
          peak = Math.max(peak, running);
          await new Promise((r) => setTimeout(r, 5));
          running--;
        }),
      ),
    );
    expect(peak).toBe(2);
  });
});
