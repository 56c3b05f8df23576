/**
 * @module The sandbox on Bun, loaded by the entry (server.ts). One process: an embedded file serves
 * one (sqlite/ownership.ts); several processes or instances share a PostgreSQL database.
 */
import { openEmbedded } from './sqlite'
import { start } from '../start'

/**
 * WAL checkpoints run in a worker thread (sqlite.ts), for the data file only. The compiled binary
 * holds the worker as its second entry point (`npm run build:binary`), beside this one.
 */
const checkpointerUrl = new URL('./checkpointer.ts', import.meta.url).href

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
