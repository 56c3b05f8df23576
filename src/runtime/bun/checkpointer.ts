/**
 * @module A Bun worker thread that checkpoints the WAL of the database the server uses, so that
 * copying pages back and the fsync that follows never run inside a request's commit. After each
 * checkpoint it reports the WAL's size and how much of it is copied back (sqlite.ts paces the sweep by
 * it). Started by `openEmbedded` (sqlite.ts), and stopped before the final checkpoint at shutdown (two
 * checkpointers cannot run at once).
 */
import { Database } from 'bun:sqlite'

/** `mark`: a number the main thread sends; every later report echoes the last one received before its checkpoint began. */
type Message = { start: { path: string; everyMs: number } } | { mark: number } | { stop: true }

/**
 * The WAL after a checkpoint: pages in it, pages copied back, and the last mark received before the
 * checkpoint began; and when the checkpoint began (ms since the epoch) and how long it took, for the
 * stall trace (stall-trace.ts).
 */
export interface WalReport {
  pages: number
  copied: number
  mark: number
  at: number
  ms: number
}

/** What the worker tells the main thread: the WAL after each checkpoint, or that it stopped. */
export type Report = { wal: WalReport } | 'stopped'

declare const self: {
  onmessage: ((event: MessageEvent<Message>) => void) | null
  postMessage(message: Report): void
}

let db: Database | null = null

/** A checkpoint's result: pages in the WAL and pages copied back. `all()`, not `get()`: a statement left unfinished would hold a read snapshot, and the WAL could never start anew. */
const checkpoint = (mode: 'PASSIVE') => db!.query<{ log: number; checkpointed: number }, []>(`PRAGMA wal_checkpoint(${mode})`).all()[0]
let timer: ReturnType<typeof setInterval> | undefined
let mark = 0

self.onmessage = ({ data }) => {
  if ('mark' in data) {
    mark = data.mark
    return
  }
  if ('start' in data) {
    db = new Database(data.start.path)
    db.exec('PRAGMA busy_timeout = 5000')
    timer = setInterval(() => {
      try {
        const markBefore = mark
        const started = performance.now()
        const row = checkpoint('PASSIVE')
        if (row) {
          const at = performance.timeOrigin + started
          self.postMessage({ wal: { pages: row.log, copied: row.checkpointed, mark: markBefore, at, ms: performance.now() - started } })
        }
      } catch {
        // busy or failing storage: the next tick tries again, and SQLite's own checkpoint remains
      }
    }, data.start.everyMs)
    return
  }
  clearInterval(timer)
  db?.close()
  db = null
  self.postMessage('stopped')
}
