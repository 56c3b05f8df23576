/** @module A checkpoint worker that reports a large WAL not yet copied back once, then never again, as if every checkpoint failed (checkpointer.test.ts). */
export {}
declare const self: { onmessage: ((event: { data: object }) => void) | null; postMessage(message: unknown): void }

self.onmessage = ({ data }) => {
  if ('start' in data) self.postMessage({ wal: { pages: 5_000, copied: 0, mark: 0 } })
}
