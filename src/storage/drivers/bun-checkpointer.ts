/**
 * @module A Bun worker thread that checkpoints the WAL of the database the server uses, so that
 * copying pages back and the fsync that follows never run inside a request's commit.
 * Started by the Bun entry, which turns SQLite's automatic checkpoint off while it runs, and
 * stopped before the final checkpoint at shutdown (two checkpointers cannot run at once).
 */
import { Database } from 'bun:sqlite'

type Message = { start: { path: string; everyMs: number } } | { stop: true }

declare const self: {
  onmessage: ((event: MessageEvent<Message>) => void) | null
  postMessage(message: 'stopped'): void
}

let db: Database | null = null
let timer: ReturnType<typeof setInterval> | undefined

self.onmessage = ({ data }) => {
  if ('start' in data) {
    db = new Database(data.start.path)
    db.exec('PRAGMA busy_timeout = 5000')
    timer = setInterval(() => {
      try {
        db?.exec('PRAGMA wal_checkpoint(PASSIVE)')
      } catch {
        // busy or failing storage: the next tick tries again
      }
    }, data.start.everyMs)
    return
  }
  clearInterval(timer)
  db?.close()
  db = null
  self.postMessage('stopped')
}
