/**
 * One exported handler per function of a bundle, with the handlers (and their clients) built on
 * first use, once per container: a function only pays for what it calls.
 */
export function lazyHandlers<N extends string>(
  build: () => Record<N, (event: never, context: unknown) => Promise<unknown>> | Promise<Record<N, (event: never, context: unknown) => Promise<unknown>>>,
): (name: N) => (event: never, context: unknown) => Promise<unknown> {
  let handlers: ReturnType<typeof build> | undefined;
  return (name) => async (event, context) => {
    // A failed build (a secret not readable yet) is not kept: the next invocation tries again.
    handlers ??= Promise.resolve(build()).catch((err: unknown) => {
      handlers = undefined;
      throw err;
    });
    return (await handlers)[name](event, context);
  };
}
