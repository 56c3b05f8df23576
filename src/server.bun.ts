/**
 * @module Bun entry: `bun src/server.bun.ts`, and the compiled binary. With `SANDBOX_WORKERS=N` the
 * first process starts N-1 more of itself; all listen on one port (`reusePort`) and share the
 * SQLite file, whose transactions keep the rate limit and idempotency exact across them.
 */
import { openBunSqlite } from './storage/drivers/bun-sqlite'
import type { SqliteDriver } from './storage/driver'
import { start } from './server'

const WORKER_INDEX = 'SANDBOX_WORKER_INDEX'
const isPrimary = !process.env[WORKER_INDEX]

/** Starts the other workers: this same program (script or compiled binary) with the same arguments. */
function spawnWorkers(count: number) {
  const script = Bun.main.startsWith('/$bunfs/') ? [] : [Bun.main]
  return Array.from({ length: count }, (_, index) =>
    Bun.spawn([process.execPath, ...script, ...process.argv.slice(2)], {
      env: { ...process.env, [WORKER_INDEX]: String(index + 1) },
      stdio: ['ignore', 'inherit', 'inherit'],
    }),
  )
}

/**
 * Moves WAL checkpoints (page copies and their fsync) to a worker thread: on disk they made most of
 * the request latency tail (bench/run.ts: plan search p99 at half rate 15.9 ms → 6.0 ms). SQLite's
 * own checkpoint stays on, at 40 MB of WAL, in case the worker ever stops.
 */
let checkpointer: Worker | null = null

function openWithCheckpointer(path: string): SqliteDriver {
  const db = openBunSqlite(path)
  if (path === ':memory:' || !isPrimary) return db
  db.exec('PRAGMA wal_autocheckpoint = 10000')
  checkpointer = new Worker(new URL('./storage/drivers/bun-checkpointer.ts', import.meta.url).href)
  checkpointer.postMessage({ start: { path, everyMs: 200 } })
  ;(checkpointer as Worker & { unref(): void }).unref() // Bun: the worker does not keep the process alive
  return db
}

/** Stops the checkpointer (at most 1 s) so that the final checkpoint at shutdown can truncate the WAL. */
async function stopCheckpointer(): Promise<void> {
  const worker = checkpointer
  if (!worker) return
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

start(
  {
    sweeps: isPrimary,
    openDatabase: openWithCheckpointer,
    beforeFinalCheckpoint: stopCheckpointer,
    serve(app, config, services) {
      app.listen({ port: config.port, hostname: config.host, reusePort: config.workers > 1 })
      const server = app.server!
      services.peerAddress = (request) => server.requestIP(request)?.address
      const workers = isPrimary && config.workers > 1 ? spawnWorkers(config.workers - 1) : []
      return {
        url: server.url.toString(),
        stop: async () => {
          for (const worker of workers) worker.kill('SIGTERM')
          await Promise.all([server.stop(), ...workers.map((worker) => worker.exited)])
        },
      }
    },
  },
  process.env,
  process.argv.slice(2),
)
