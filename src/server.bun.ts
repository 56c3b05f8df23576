/**
 * @module Bun entry: `bun src/server.bun.ts`, and the compiled binary. One process: an embedded
 * file serves one (sqlite/ownership.ts); several processes or instances share a PostgreSQL database.
 */
import { openEmbedded } from './storage/drivers/bun'
import { start } from './server'

/** WAL checkpoints run in a worker thread (storage/drivers/bun.ts), for the data file only. */
const checkpointerUrl = new URL('./storage/drivers/bun-checkpointer.ts', import.meta.url).href

start(
  {
    openEmbedded: (path, role) => openEmbedded(path, role === 'data' ? { checkpointerUrl } : {}),
    peerAddress: (request, server) => server?.requestIP(request)?.address,
    serve(app, config) {
      app.listen({ port: config.port, hostname: config.host })
      const server = app.server!
      return { url: server.url.toString(), stop: () => server.stop() }
    },
  },
  process.env,
  process.argv.slice(2),
)
