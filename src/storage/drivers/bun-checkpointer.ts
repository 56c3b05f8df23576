/**
 * @module A Bun worker thread that checkpoints the WAL of the database the server uses, so that
 * copying pages back and the fsync that follows never run inside a request's commit. After each
 * checkpoint it reports the WAL's size and how much of it is copied back (bun.ts paces the sweep by
 * it). Started by `openEmbedded` (bun.ts), and stopped before the final checkpoint at shutdown (two
 * checkpointers cannot run at once).
 */
import { Database } from 'bun:sqlite'

type Message = { start: { path: string; everyMs: number } } | { stop: true }

/**
 * What the worker tells the main thread: the WAL after a checkpoint (pages in it, pages copied back,
 * and when the checkpoint began, `Date.now()`), or that it stopped.
 */
export type Report = { wal: { pages: number; copied: number; began: number } } | 'stopped'

declare const self: {
  onmessage: ((event: MessageEvent<Message>) => void) | null
  postMessage(message: Report): void
}

let db: Database | null = null
let timer: ReturnType<typeof setInterval> | undefined

self.onmessage = ({ data }) => {
  if ('start' in data) {
    db = new Database(data.start.path)
    db.exec('PRAGMA busy_timeout = 5000')
    timer = setInterval(() => {
      try {
        const began = Date.now()
        // all(), not get(): a statement left unfinished would hold a read snapshot, and the WAL could never start anew.
        const [row] = db!.query<{ log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)').all()
        if (row) self.postMessage({ wal: { pages: row.log, copied: row.checkpointed, began } })
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
