/** @module Waiting helpers: a free port (the benchmark's; the HTTP suite takes its own, server.ts) and a pause. */
import { createServer, type AddressInfo } from 'node:net'

/** A loopback port nobody listens on right now (the kernel picks it). */
export async function freePort(): Promise<number> {
  const probe = createServer()
  await new Promise<void>((done, fail) => {
    probe.once('error', fail)
    probe.listen(0, '127.0.0.1', done)
  })
  const { port } = probe.address() as AddressInfo
  await new Promise((done) => probe.close(done))
  return port
}

/** Resolves after `ms` milliseconds (at once for 0 or less). */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)))
