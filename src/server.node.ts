/** @module Node entry: `npm run start:node` (bundled by Bun, run by Node), storing through better-sqlite3. */
import { node } from '@elysiajs/node'
import { openBetterSqlite3 } from './storage/drivers/better-sqlite3'
import { start } from './server'

/** The Node adapter (srvx) keeps the raw IncomingMessage on the request. */
type NodeRequest = Request & { runtime?: { node?: { req?: { socket?: { remoteAddress?: string } } } } }

start(
  {
    adapter: node(),
    openDatabase: openBetterSqlite3,
    serve(app, config, services) {
      services.peerAddress = (request) => (request as NodeRequest).runtime?.node?.req?.socket?.remoteAddress
      let stop = async () => {}
      // The Node adapter hands its server to the callback only; `app.server` stays null.
      app.listen({ port: config.port, hostname: config.host }, (server) => {
        stop = async () => void (await server.stop())
      })
      return { url: `http://${config.host}:${config.port}/`, stop: () => stop() }
    },
  },
  process.env,
  process.argv.slice(2),
)
