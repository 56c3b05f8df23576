/**
 * @module The embedded database through `bun:sqlite`, for the Bun entry and the compiled binary.
 * With `checkpointerUrl` (the worker's module, named by the entry so that the compiled binary finds
 * it among its entry points), WAL checkpoints (page copies and their fsync) run in a worker thread: on
 * disk they made most of the request latency tail (bench/run.ts: plan search p99 at half rate
 * 15.9 ms → 6.0 ms). SQLite's own checkpoint is off while the worker runs, and back on if it stops.
 */
import { Database } from 'bun:sqlite'
import { connectionOver, type SqliteConnection, type SqlValue } from './connection'

export function openEmbedded(path: string, options: { checkpointerUrl?: string } = {}): SqliteConnection {
  const db = new Database(path, { create: true, readwrite: true })
  const connection = connectionOver(db, (sql) => db.query<unknown, SqlValue[]>(sql))
  // After the pragmas (WAL first): the worker opens the same file.
  if (!options.checkpointerUrl || path === ':memory:') return connection
  return { ...connection, beforeClose: startCheckpointer(db, path, options.checkpointerUrl) }
}

/** Starts the checkpoint worker; the function it returns stops it. */
function startCheckpointer(db: Database, path: string, url: string): () => Promise<void> {
  // SQLite's own checkpoint runs inside whichever commit crosses its mark, on the main thread. Kept on
  // at 10,000 pages as a safety net, a 100,000-session expiry sweep had 39 requests over 50 ms (worst
  // 88–118 ms); off, 0–2 (bench/README.md).
  db.exec('PRAGMA wal_autocheckpoint = 0')
  const worker = new Worker(url)
  let stopping = false
  let exited = false
  // A worker that fails or exits, other than at shutdown, hands checkpoints back to SQLite (its default mark).
  const handBack = () => {
    exited = true
    if (!stopping) db.exec('PRAGMA wal_autocheckpoint = 1000')
  }
  worker.addEventListener('error', handBack)
  worker.addEventListener('close', handBack)
  worker.postMessage({ start: { path, everyMs: 200 } })
  ;(worker as Worker & { unref(): void }).unref() // Bun: the worker does not keep the process alive
  return async () => {
    stopping = true
    if (!exited) await stopCheckpointer(worker)
  }
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
