/**
 * @module A webhook receiver on loopback for the HTTP suite: it keeps every delivery (headers and
 * the raw body, as a partner's receiver must verify it) and answers the statuses it is told to,
 * then 200.
 */
import { createServer, type Server } from 'node:http'
import { testPort } from './server'

export interface Received {
  headers: Record<string, string | string[] | undefined>
  body: string
  /** When it arrived (ms since the epoch). */
  at: number
  /** The status it was answered. */
  status: number
}

export interface Receiver {
  url: string
  received: Received[]
  /** The JSON bodies received, in order. */
  events(): { id: string; type: string; created_at: string; session_ref: string; data: any }[]
  /** Answers these statuses to the next deliveries, in order, then 200 again. */
  failNext(...statuses: number[]): void
  close(): Promise<void>
}

/** Starts a receiver on a port of the worker's own (`port` to bring it back on the same one). */
export async function startReceiver(port?: number): Promise<Receiver> {
  const received: Received[] = []
  const failures: number[] = []
  const server: Server = createServer((request, response) => {
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (body += chunk))
    request.on('end', () => {
      const status = failures.shift() ?? 200
      received.push({ headers: request.headers, body, at: Date.now(), status })
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'not now')
    })
  })
  const chosen = port ?? (await testPort())
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(chosen, '127.0.0.1', () => resolve())
  })
  return {
    url: `http://127.0.0.1:${chosen}/hooks/sandbox`,
    received,
    events: () => received.map((delivery) => JSON.parse(delivery.body)),
    failNext: (...statuses) => void failures.push(...statuses),
    close: () => new Promise((resolve) => {
      server.closeAllConnections?.()
      server.close(() => resolve())
    }),
  }
}
