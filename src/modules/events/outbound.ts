/**
 * @module Outbound webhook calls, the sandbox's one way of reaching other hosts on a partner's word.
 * With `public` targets (hosted) a URL may name only a public address over HTTP(S) on port 80 or
 * 443; its host name is resolved (host-names.ts) and every address checked, and the call goes to
 * the checked address itself, so DNS cannot swap in another between check and connect. Everywhere:
 * no redirect is followed, one deadline of 5 s covers the whole call, at most 64 KiB of the answer
 * is read, and only its status is kept.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { BlockList, isIP } from 'node:net'
import { LOOKUP_TIMEOUT_MS, type HostNames, type Targets } from './host-names'

export const CALL_TIMEOUT_MS = 5_000
const ANSWER_LIMIT = 64 * 1024

/**
 * Addresses that are not on the public internet: loopback, private, link-local, shared, reserved,
 * documentation, multicast; IPv6 that embeds an IPv4 address (IPv4-compatible, IPv4-translated,
 * NAT64, 6to4). (No `::ffff:0:0/96` rule: Bun checks
 * IPv4 addresses against IPv6 rules as mapped ones, so that rule would refuse every IPv4 address.)
 */
const NOT_PUBLIC = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 96],
  ['::ffff:0:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  NOT_PUBLIC.addSubnet(network, prefix, 'ipv6')

export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  const mapped = family === 6 ? mappedIpv4(address) : null
  if (mapped) return !NOT_PUBLIC.check(mapped, 'ipv4')
  return !NOT_PUBLIC.check(address, family === 6 ? 'ipv6' : 'ipv4')
}

/**
 * The IPv4 address an IPv4-mapped IPv6 address carries, in any spelling (`::ffff:127.0.0.1`,
 * `::ffff:7f00:1`, `0:0:0:0:0:ffff:7f00:1`): judged as that IPv4 address, since runtimes disagree on
 * whether BlockList does. The URL parser writes every spelling the one way.
 */
function mappedIpv4(address: string): string | null {
  const match = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(new URL(`http://[${address}]`).hostname)
  if (!match) return null
  const [high, low] = [parseInt(match[1]!, 16), parseInt(match[2]!, 16)]
  return [high >> 8, high & 255, low >> 8, low & 255].join('.')
}

/** Why an attempt had no status when a target is refused: words for `details`, and the attempt's error. */
type Refusal = { problem: string; error: 'timeout' | 'connection_failed' | 'target_refused' }

const PUBLIC_ONLY = '(this sandbox delivers only to public addresses)'

/**
 * A URL's problem as a webhook target, or where to connect. `public` resolves the host name and
 * checks every address; `any` resolves it only when `resolveAny` (a delivery: a registration takes
 * the name as it is). `deadline` bounds the lookup.
 */
async function resolveTarget(
  raw: string,
  targets: Targets,
  names: Names,
  deadline: AbortSignal,
  resolveAny: boolean,
): Promise<Refusal | { url: URL; addresses: string[] }> {
  const url = URL.canParse(raw) ? new URL(raw) : null
  if (!url || !['http:', 'https:'].includes(url.protocol)) return { problem: 'must be an http or https URL', error: 'target_refused' }
  if (url.username || url.password) return { problem: 'must not carry credentials', error: 'target_refused' }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (targets === 'public' && url.port !== '' && !['80', '443'].includes(url.port)) {
    return { problem: `must use port 80 or 443 ${PUBLIC_ONLY}`, error: 'target_refused' }
  }
  if (targets === 'any' && !resolveAny) return { url, addresses: [host] }
  const found = await names.hostNames.lookup(host, names.callers, deadline)
  if ('failure' in found) {
    return found.failure === 'timeout'
      ? { problem: `must name a host whose DNS answers: no answer within ${LOOKUP_TIMEOUT_MS / 1000} s`, error: 'timeout' }
      : { problem: 'must name a host that has an address', error: 'connection_failed' }
  }
  if (targets === 'public' && !found.addresses.every(isPublicAddress)) {
    return { problem: `must name a host with only public addresses ${PUBLIC_ONLY}`, error: 'target_refused' }
  }
  return { url, addresses: found.addresses }
}

/** The resolver and who is asking, for the per-caller turns (host-names.ts). */
export interface Names {
  hostNames: HostNames
  callers: string[]
}

/** Why a webhook URL cannot be registered (words for `details`), or null. */
export async function targetProblem(raw: string, targets: Targets, names: Names): Promise<string | null> {
  const target = await resolveTarget(raw, targets, names, AbortSignal.timeout(LOOKUP_TIMEOUT_MS), false)
  return 'problem' in target ? target.problem : null
}

export type CallOutcome = { status: number } | { error: 'timeout' | 'connection_failed' | 'target_refused' }

/**
 * POSTs `body` to `raw`, checking the target again first; never throws. One deadline of 5 s covers
 * resolving the host name, connecting, sending and the whole answer: a call whose deadline passed
 * while its name was resolving is never sent, and one out when it passes is closed.
 */
export async function postJson(raw: string, body: string, headers: Record<string, string>, targets: Targets, names: Names): Promise<CallOutcome> {
  const deadline = AbortSignal.timeout(CALL_TIMEOUT_MS)
  const target = await resolveTarget(raw, targets, names, deadline, true)
  if (deadline.aborted) return { error: 'timeout' }
  if ('problem' in target) return { error: target.error }
  // The next address when one refuses the connection (`localhost` is 127.0.0.1 and ::1; a receiver
  // may listen on either), within the same deadline.
  for (const address of target.addresses) {
    const outcome = await send(target.url, address, body, headers, deadline)
    if (!('unreached' in outcome)) return outcome
  }
  return { error: 'connection_failed' }
}

/** Errors that mean the address took no connection, so nothing was sent: the next one may be tried. */
const UNREACHED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'EAFNOSUPPORT'])

/**
 * One POST to `address` (a checked one) in the URL's name, on a connection of its own; at most
 * 64 KiB of the answer is read. `unreached`: the address took no connection.
 */
function send(
  url: URL,
  address: string,
  body: string,
  headers: Record<string, string>,
  deadline: AbortSignal,
): Promise<CallOutcome | { error: 'connection_failed'; unreached: true }> {
  // Past the deadline nothing is sent (an abort listener added now would never fire).
  if (deadline.aborted) return Promise.resolve({ error: 'timeout' })
  const https = url.protocol === 'https:'
  const host = url.hostname.replace(/^\[|\]$/g, '')
  return new Promise((resolve) => {
    const call = (https ? httpsRequest : httpRequest)(
      {
        host: address,
        // TLS checks the certificate against the name, not the address connected to.
        servername: https && !isIP(host) ? host : undefined,
        port: url.port || (https ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        // No keep-alive: the connection closes with the answer, not some time after it.
        agent: false,
        headers: { ...headers, host: url.host, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
      },
      (answer: IncomingMessage) => {
        let read = 0
        answer.on('data', (chunk: Buffer) => {
          read += chunk.length
          if (read > ANSWER_LIMIT) done({ status: answer.statusCode ?? 0 })
        })
        answer.on('end', () => done({ status: answer.statusCode ?? 0 }))
        answer.on('close', () => done({ status: answer.statusCode ?? 0 }))
        answer.on('error', () => done({ status: answer.statusCode ?? 0 }))
      },
    )
    const expire = () => done({ error: 'timeout' })
    let settled = false
    function done(outcome: CallOutcome | { error: 'connection_failed'; unreached: true }): void {
      if (settled) return
      settled = true
      deadline.removeEventListener('abort', expire)
      call.destroy()
      resolve(outcome)
    }
    deadline.addEventListener('abort', expire, { once: true })
    call.on('error', (error: NodeJS.ErrnoException) =>
      done(UNREACHED.has(error.code ?? '') ? { error: 'connection_failed', unreached: true } : { error: 'connection_failed' }),
    )
    call.end(body)
  })
}
