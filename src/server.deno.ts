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
      // Deno's shutdown() cuts off request bodies still arriving: wait for in-flight requests first.
      let inFlight = 0
      let drained = () => {}
      const server = Deno.serve({ port: config.port, hostname: config.host, onListen: () => {} }, async (request, info) => {
        peers.set(request, info.remoteAddr.hostname)
        inFlight++
        try {
          return await app.fetch(request)
        } finally {
          if (--inFlight === 0) drained()
        }
      })
      return {
        url: `http://${config.host}:${config.port}/`,
        stop: async () => {
          if (inFlight > 0) await new Promise<void>((resolve) => (drained = resolve))
          await server.shutdown()
        },
      }
    },
  },
  process.env,
  process.argv.slice(2),
)
