/**
 * @module Bun entry: `bun src/server.bun.ts`, and the compiled binary. With `SANDBOX_WORKERS=N` the
 * first process starts N-1 more of itself; all listen on one port (`reusePort`) and share the
 * database, whose transactions keep the rate limit and idempotency exact across them.
 */
import { openEmbedded } from './storage/drivers/bun'
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

/** The primary process checkpoints the embedded database's WAL in a worker thread (storage/drivers/bun.ts). */
const checkpointerUrl = isPrimary ? new URL('./storage/drivers/bun-checkpointer.ts', import.meta.url).href : undefined

start(
  {
    sweeps: isPrimary,
    openEmbedded: (path) => openEmbedded(path, { checkpointerUrl }),
    peerAddress: (request, server) => server?.requestIP(request)?.address,
    serve(app, config) {
      app.listen({ port: config.port, hostname: config.host, reusePort: config.workers > 1 })
      const server = app.server!
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
