/**
 * @module What memory holds that the file does not yet (write-behind.ts): taken whole by a write, and
 * given back to be written by the next one if that write's transaction fails.
 */
export function unwritten<Held>(empty: () => Held, size: (held: Held) => number, merge: (taken: Held, newer: Held) => Held) {
  let held = empty()
  return {
    /** What is held now, to add to. */
    get held(): Held {
      return held
    },
    isEmpty: () => size(held) === 0,
    take(): Held {
      const taken = held
      held = empty()
      return taken
    },
    /** Gives back what a failed write took, merged with what was added meanwhile. */
    restore(taken: Held): void {
      held = merge(taken, held)
    },
  }
}

export type Unwritten<Held> = ReturnType<typeof unwritten<Held>>
