/**
 * @module Deno entry: bundled to one file (`npm run build:deno`), served by `Deno.serve`, embedded
 * database through its Deno driver (sqlite.ts). Elysia's `listen()` does not run on Deno, so the app is served by `fetch`.
 */
import { openEmbedded } from './sqlite'
import { start } from '../start'

declare const Deno: {
  serve(
    options: { port: number; hostname: string; onListen?: () => void },
    handler: (request: Request, info: { remoteAddr: { hostname: string } }) => Response | Promise<Response>,
  ): { shutdown(): Promise<void> }
}

/**
 * Deno builds `request.url` from the Host header as sent, so a Host holding `/`, `?`, `#`, `@` or a
 * space moves the path (`Host: a/b` makes `/b/api/…`). Such a request gets a URL on a neutral host.
 */
function withTrustworthyUrl(request: Request): Request {
  const host = request.headers.get('host') ?? ''
  if (!/[/?#@\\\s]/.test(host)) return request
  const start = request.url.indexOf('://') + 3 + host.length
  // Not `new Request(url, request)`: reading `request.signal` makes Deno warn about its legacy abort.
  const { method, headers, body } = request
  return new Request(`http://localhost${request.url.slice(start)}`, { method, headers, body, duplex: 'half' } as RequestInit)
}

/** Each request's socket peer, which Deno hands to the handler beside the request. */
const peers = new WeakMap<Request, string>()

start(
  {
    openEmbedded,
    peerAddress: (request) => peers.get(request),
    serve(app, config) {
      // Deno's shutdown() cuts off request bodies still arriving: wait for in-flight requests first.
      let inFlight = 0
      let drained = () => {}
      const server = Deno.serve({ port: config.port, hostname: config.host, onListen: () => {} }, async (received, info) => {
        const request = withTrustworthyUrl(received)
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
