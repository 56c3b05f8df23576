/**
 * @module A round-robin HTTP load balancer on loopback for the `pg` project: each request goes to
 * the next upstream in turn (instance A, B, A, …), whichever client connection it came on.
 *
 * It stands where a hosted deployment's load balancer stands, and changes nothing the suite
 * checks: method, path, header fields (names, order, repeats, X-Forwarded-For — nothing appended:
 * the instances trust one hop, and that hop is the test's own network) and the body go through as
 * they came, streamed both ways; the answer's status, header fields and body come back the same.
 * Only the connection is its own: keep-alive to the client and to each upstream.
 *
 * Run: `PORT=… SANDBOX_UPSTREAMS=http://127.0.0.1:a,http://127.0.0.1:b bun test/http/support/balancer.ts`
 */
import { Agent, createServer, request, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http'
import type { Socket } from 'node:net'

const upstreams = (process.env.SANDBOX_UPSTREAMS ?? '')
  .split(',')
  .filter(Boolean)
  .map((text) => new URL(text))
if (upstreams.length === 0) throw new Error('SANDBOX_UPSTREAMS: a comma-separated list of upstream URLs is required')
const port = Number(process.env.PORT)
const agent = new Agent({ keepAlive: true, maxSockets: 256 })

/** Hop-by-hop fields: they describe one connection, so each side makes its own. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade'])

/** The raw header list without hop-by-hop fields, as [name, value, name, value, …]. */
function endToEnd(raw: string[]): string[] {
  const kept: string[] = []
  for (let index = 0; index < raw.length; index += 2) {
    if (!HOP_BY_HOP.has(raw[index]!.toLowerCase())) kept.push(raw[index]!, raw[index + 1]!)
  }
  return kept
}

let next = 0
/** Per client connection: the answer still being forwarded, if any. */
const inFlight = new WeakMap<Socket, Promise<void>>()

const server = createServer({ keepAlive: true }, (incoming: IncomingMessage, outgoing) => {
  const upstream = upstreams[next++ % upstreams.length]!
  inFlight.set(incoming.socket, new Promise((done) => outgoing.on('close', () => done())))
  const forward = request({
    agent,
    host: upstream.hostname,
    port: upstream.port,
    method: incoming.method,
    path: incoming.url,
    // An array keeps every field as sent, repeats and order included.
    headers: endToEnd(incoming.rawHeaders) as unknown as OutgoingHttpHeaders,
  })
  forward.on('response', (answer) => {
    outgoing.writeHead(answer.statusCode!, answer.statusMessage, endToEnd(answer.rawHeaders) as unknown as OutgoingHttpHeaders)
    answer.pipe(outgoing)
    answer.on('error', () => outgoing.destroy())
  })
  forward.on('error', (error) => {
    if (outgoing.headersSent) return void outgoing.destroy()
    outgoing.writeHead(502, { 'content-type': 'text/plain' }).end(`balancer: ${upstream.host} failed: ${error.message}\n`)
  })
  incoming.pipe(forward)
  // A client that goes away takes its forwarded request with it.
  outgoing.on('close', () => {
    if (!outgoing.writableFinished) forward.destroy()
  })
})

// Bytes after a request that do not parse as the next one (a lying Content-Length): the answer to
// the request before them goes out first, then the connection ends, as a server would do it (the
// runtime's default would answer 400 at once, ahead of that answer).
server.on('clientError', (_error: Error, socket: Socket) => {
  void (inFlight.get(socket) ?? Promise.resolve()).then(() => socket.destroySoon?.() ?? socket.end())
})

server.listen(port, '127.0.0.1', () => console.log(`[balancer] 127.0.0.1:${port} → ${upstreams.map((url) => url.host).join(', ')}`))
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => process.exit(0))
