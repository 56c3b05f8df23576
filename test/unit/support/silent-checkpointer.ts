/** @module A checkpoint worker that reports a large WAL not yet copied back once, then never again, as if every checkpoint failed (checkpointer.test.ts). */
export {}
declare const self: { onmessage: (() => void) | null; postMessage(message: unknown): void }
self.onmessage = () => { self.postMessage({ wal: { pages: 5_000, copied: 0, began: Date.now() } }) }
