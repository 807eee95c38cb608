/**
 * One exported handler per function of a bundle, with the handlers (and their clients) built on
 * first use, once per container: a function only pays for what it calls.
 */
export function lazyHandlers<N extends string>(
  build: () => Record<N, (event: never, context: unknown) => Promise<unknown>>,
): (name: N) => (event: never, context: unknown) => Promise<unknown> {
  let handlers: ReturnType<typeof build> | undefined;
  return (name) => (event, context) => {
    handlers ??= build();
    return handlers[name](event, context);
  };
}
