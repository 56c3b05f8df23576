/**
 * @module Webhook receivers on loopback for the HTTP suite: one keeps every delivery (headers and
 * the raw body, as a partner's receiver must verify it) and answers the statuses it is told to,
 * then 200; a hung one never answers. Each listens on a path of its own and keeps only what is sent
 * there: its port may have been another receiver's in an earlier test (each project's worker hands
 * out the same ports again), whose sessions the shared servers still retry for minutes.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net'
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
  events(): { id: string; type: string; version: number; created_at: string; session_ref: string; data: any }[]
  /** Answers these statuses to the next deliveries, in order, then 200 again. */
  failNext(...statuses: number[]): void
  close(): Promise<void>
}

/** Starts a receiver on a port of the worker's own (`url`: one closed before, brought back). */
export async function startReceiver(url?: string): Promise<Receiver> {
  const path = url ? new URL(url).pathname : ownPath('sandbox')
  const received: Received[] = []
  const failures: number[] = []
  const server: Server = createServer((request, response) => {
    if (request.url !== path) {
      response.writeHead(404).end()
      return
    }
    let body = ''
    request.setEncoding('utf8')
    request.on('data', (chunk: string) => (body += chunk))
    request.on('end', () => {
      const status = failures.shift() ?? 200
      received.push({ headers: request.headers, body, at: Date.now(), status })
      response.writeHead(status, { 'content-type': 'text/plain' }).end(status === 200 ? 'ok' : 'not now')
    })
  })
  const chosen = await listenOnLoopback(server, url ? Number(new URL(url).port) : await testPort())
  return {
    url: `http://127.0.0.1:${chosen}${path}`,
    received,
    events: () => received.map((delivery) => JSON.parse(delivery.body)),
    failNext: (...statuses) => void failures.push(...statuses),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.()
        server.close(() => resolve())
      }),
  }
}

export interface HungReceiver {
  url: string
  /**
   * Every connection whose request named its URL: when it opened and, once it has, when it closed
   * (ms since the epoch).
   */
  connections: { openedAt: number; closedAt: number | null }[]
  close(): Promise<void>
}

/**
 * An endpoint that takes every connection and request and never answers. A connection whose request
 * line names another path is closed and not counted.
 */
export async function startHungReceiver(): Promise<HungReceiver> {
  const path = ownPath('hung')
  const connections: HungReceiver['connections'] = []
  const sockets = new Set<Socket>()
  const server = createNetServer((socket) => {
    const connection = { openedAt: Date.now(), closedAt: null as number | null }
    let head = ''
    sockets.add(socket)
    socket.setEncoding('latin1')
    socket.on('data', (chunk: string) => {
      if (head.includes('\r\n')) return
      head += chunk
      if (!head.includes('\r\n')) return
      if (head.split(' ')[1] === path) connections.push(connection)
      else socket.destroy()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      connection.closedAt = Date.now()
      sockets.delete(socket)
    })
  })
  const port = await listenOnLoopback(server, await testPort())
  return {
    url: `http://127.0.0.1:${port}${path}`,
    connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** A path no other receiver has. */
const ownPath = (kind: string) => `/hooks/${kind}/${randomUUID()}`

/** Listens on 127.0.0.1:`port`; answers the port. */
function listenOnLoopback(server: Server | NetServer, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve(port))
  })
}
