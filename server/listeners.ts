// A set of listeners in this process: `add` returns its remover, `publish` calls each in turn. A
// listener that throws, or whose promise rejects, is reported through `onError` and keeps the
// publication from none of the others.
export type Listener<A extends unknown[]> = (...args: A) => void | Promise<void>;

export interface Listeners<A extends unknown[]> {
  add(listener: Listener<A>): () => void;
  publish(...args: A): void;
  clear(): void;
}

export const createListeners = <A extends unknown[]>(onError: (error: unknown, ...args: A) => void): Listeners<A> => {
  const listeners = new Set<Listener<A>>();
  return {
    add: (listener) => {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    publish: (...args) => {
      for (const listener of listeners) {
        try {
          const done = listener(...args);
          if (done instanceof Promise) done.catch((error: unknown) => onError(error, ...args));
        } catch (error) {
          onError(error, ...args);
        }
      }
    },
    clear: () => listeners.clear(),
  };
};
