/** @module Bun entry: `bun src/server.bun.ts`, and the compiled binary. */
import { openBunSqlite } from './storage/drivers/bun-sqlite'
import { start } from './server'

start(
  {
    openDatabase: openBunSqlite,
    serve(app, config, services) {
      app.listen({ port: config.port, hostname: config.host })
      const server = app.server!
      services.peerAddress = (request) => server.requestIP(request)?.address
      return { url: server.url.toString(), stop: () => server.stop() }
    },
  },
  process.env,
  process.argv.slice(2),
)
