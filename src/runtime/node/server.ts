/** @module Node entry: `npm run start:node` (bundled by Bun, run by Node), embedded database through its Node driver (sqlite.ts). */
import type { Server as HttpServer } from 'node:http'
import type { Duplex } from 'node:stream'
import { node } from '@elysiajs/node'
import { openEmbedded } from './sqlite'
import { cannotStart, listenFailure, start } from '../start'

/** The Node adapter (srvx) keeps the raw IncomingMessage on the request. */
type NodeRequest = Request & { runtime?: { node?: { req?: { socket?: { remoteAddress?: string } } } } }

/** What the adapter hands to `listen`'s callback. */
type ListeningServer = { stop(): Promise<void>; raw?: { node?: { server?: HttpServer } } }

/**
 * Node's default answer to a malformed request (say, bytes after a lying Content-Length) destroys
 * the socket at once, losing the answer still being written to the request before it. Let that
 * answer finish first; otherwise answer as Node would.
 */
function finishBeforeRefusing(error: Error & { code?: string }, socket: Duplex & { _httpMessage?: NodeJS.WritableStream & { writableFinished?: boolean } }) {
  const answering = socket._httpMessage
  if (answering && !answering.writableFinished) {
    answering.once('finish', () => socket.destroy())
    return
  }
  if (!socket.writable || error.code === 'ECONNRESET') return void socket.destroy()
  const status =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? '431 Request Header Fields Too Large'
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? '408 Request Timeout'
        : '400 Bad Request'
  socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\n\r\n`)
}

start(
  {
    adapter: node(),
    openEmbedded,
    peerAddress: (request) => (request as NodeRequest).runtime?.node?.req?.socket?.remoteAddress,
    serve(app, config) {
      let stop = async () => {}
      const options = {
        port: config.port,
        hostname: config.host,
        // Our own shutdown (start.ts) finishes in-flight requests; srvx's would close them first.
        gracefulShutdown: false,
        // Slow clients: headers within 10 s, the whole request within 20 s (bodies: 10 s, http/steps/request-body.ts),
        // checked every second rather than Node's default 30.
        node: { headersTimeout: 10_000, requestTimeout: 20_000, connectionsCheckingInterval: 1_000 },
      }
      // The Node adapter hands its server to the callback only; `app.server` stays null.
      app.listen(options as unknown as { port: number; hostname: string }, (listening) => {
        const server = (listening as unknown as ListeningServer).raw?.node?.server
        server?.on('clientError', finishBeforeRefusing)
        // Node reports a failure to listen (a bad HOST, a PORT in use) only later, as an event.
        server?.once('error', (error) => cannotStart(listenFailure(config, error)))
        stop = async () => {
          const closed = listening.stop()
          server?.closeIdleConnections()
          await closed
        }
      })
      return { url: `http://${config.host}:${config.port}/`, stop: () => stop() }
    },
  },
  process.env,
  process.argv.slice(2),
)
