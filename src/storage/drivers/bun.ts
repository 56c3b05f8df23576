/**
 * @module The embedded database through `bun:sqlite`, for the Bun entry and the compiled binary.
 * With `checkpointerUrl` (the worker's module, named by the entry so that the compiled binary finds
 * it among its entry points), WAL checkpoints (page copies and their fsync) run in a worker thread: on
 * disk they made most of the request latency tail (bench/run.ts: plan search p99 at half rate
 * 15.9 ms → 6.0 ms). SQLite's own checkpoint stays on, at 40 MB of WAL, in case the worker stops.
 */
import { Database } from 'bun:sqlite'
import { OPEN_PRAGMAS, type SqliteDriver, type SqlValue, type Statement } from '../sqlite/driver'

export function openEmbedded(path: string, options: { checkpointerUrl?: string } = {}): SqliteDriver {
  const db = new Database(path, { create: true, readwrite: true })
  for (const pragma of OPEN_PRAGMAS) db.exec(pragma)
  const worker = options.checkpointerUrl && path !== ':memory:' ? startCheckpointer(db, path, options.checkpointerUrl) : null
  return {
    exec: (sql) => void db.exec(sql),
    prepare<Row>(sql: string): Statement<Row> {
      const statement = db.query<Row, SqlValue[]>(sql)
      return {
        // bun:sqlite answers null for "no row"; the seam promises undefined.
        get: (...params) => statement.get(...params) ?? undefined,
        all: (...params) => statement.all(...params),
        run: (...params) => statement.run(...params),
      }
    },
    close: () => db.close(),
    beforeClose: async () => {
      if (worker) await stopCheckpointer(worker)
    },
  }
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
