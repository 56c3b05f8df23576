/**
 * @module A Bun worker thread that checkpoints the WAL of the database the server uses, so that
 * copying pages back and the fsync that follows never run inside a request's commit.
 * Started by the Bun entry (`startCheckpointer`), which turns SQLite's automatic checkpoint down to
 * a safety net.
 */
import { Database } from 'bun:sqlite'

declare const self: { onmessage: ((event: MessageEvent<{ path: string; everyMs: number }>) => void) | null }

self.onmessage = ({ data }) => {
  const db = new Database(data.path)
  db.exec('PRAGMA busy_timeout = 5000')
  setInterval(() => {
    try {
      db.exec('PRAGMA wal_checkpoint(PASSIVE)')
    } catch {
      // busy or failing storage: the next tick tries again, and SQLite's own checkpoint remains
    }
  }, data.everyMs)
}
