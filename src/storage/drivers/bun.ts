/**
 * @module The embedded database through `bun:sqlite`, for the Bun entry and the compiled binary.
 * With `checkpointerUrl` (the worker's module, named by the entry so that the compiled binary finds
 * it among its entry points), WAL checkpoints (page copies and their fsync) run in a worker thread: on
 * disk they made most of the request latency tail (bench/run.ts: plan search p99 at half rate
 * 15.9 ms → 6.0 ms). SQLite's own checkpoint stays on, at 40 MB of WAL, in case the worker stops.
 */
import { Database } from 'bun:sqlite'
import { connectionOver, type SqliteConnection, type SqlValue } from './connection'

export function openEmbedded(path: string, options: { checkpointerUrl?: string } = {}): SqliteConnection {
  const db = new Database(path, { create: true, readwrite: true })
  const connection = connectionOver(db, (sql) => db.query<unknown, SqlValue[]>(sql))
  // After the pragmas (WAL first): the worker opens the same file.
  if (!options.checkpointerUrl || path === ':memory:') return connection
  const worker = startCheckpointer(db, path, options.checkpointerUrl)
  return { ...connection, beforeClose: () => stopCheckpointer(worker) }
}

function startCheckpointer(db: Database, path: string, url: string): Worker {
  db.exec('PRAGMA wal_autocheckpoint = 10000')
  const worker = new Worker(url)
  worker.postMessage({ start: { path, everyMs: 200 } })
  ;(worker as Worker & { unref(): void }).unref() // Bun: the worker does not keep the process alive
  return worker
}

/** Stops the checkpointer (at most 1 s) so that the final checkpoint at shutdown can truncate the WAL. */
async function stopCheckpointer(worker: Worker): Promise<void> {
  await new Promise<void>((resolve) => {
    const timeout = setTimeout(resolve, 1000)
    worker.onmessage = () => {
      clearTimeout(timeout)
      resolve()
    }
    worker.postMessage({ stop: true })
  })
  worker.terminate()
}
