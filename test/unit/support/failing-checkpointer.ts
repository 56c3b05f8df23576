/** @module A checkpoint worker that reports a large WAL not yet copied back, then dies (checkpointer.test.ts). */
export {}
declare const self: { onmessage: ((event: { data: object }) => void) | null; postMessage(message: unknown): void }

self.onmessage = ({ data }) => {
  if (!('start' in data)) return
  self.postMessage({ wal: { pages: 5_000, copied: 0, mark: 0 } })
  setTimeout(() => process.exit(1), 300)
}
