/**
 * @module Deno entry: bundled to one file (`npm run build:deno`), served by `Deno.serve`, storing
 * through `node:sqlite`. Elysia's `listen()` does not run on Deno, so the app is served by `fetch`.
 */
import { openNodeSqlite } from './storage/drivers/node-sqlite'
import { start } from './server'

declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen?: () => void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> }
}

start(
  {
    openDatabase: openNodeSqlite,
    serve(app, config, services) {
      const peers = new WeakMap<Request, string>()
      services.peerAddress = (request) => peers.get(request)
      const server = Deno.serve({ port: config.port, hostname: config.host, onListen: () => {} }, (request, info) => {
        peers.set(request, info.remoteAddr.hostname)
        return app.fetch(request)
      })
      return { url: `http://${config.host}:${config.port}/`, stop: () => server.shutdown() }
    },
  },
  process.env,
  process.argv.slice(2),
)
