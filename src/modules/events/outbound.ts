/**
 * @module Outbound webhook calls, the sandbox's one way of reaching other hosts on a partner's word.
 * With `public` targets (hosted) a URL may name only a public address over HTTP(S) on port 80 or
 * 443; its host name is resolved and every address checked, and the call goes to the checked
 * address itself, so DNS cannot swap in another between check and connect. Everywhere: no redirect
 * is followed, a call ends after 5 s, at most 64 KiB of the answer is read, and only its status
 * is kept.
 */
import { lookup } from 'node:dns/promises'
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { BlockList, isIP } from 'node:net'

export type Targets = 'any' | 'public'

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
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 96], ['::ffff:0:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv6')

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

/** A URL's problem as a webhook target (words for `details`), or where to connect: `public` resolves and checks every address. */
async function resolveTarget(raw: string, targets: Targets): Promise<{ problem: string } | { url: URL; address: string }> {
  const url = URL.canParse(raw) ? new URL(raw) : null
  if (!url || !['http:', 'https:'].includes(url.protocol)) return { problem: 'must be an http or https URL' }
  if (url.username || url.password) return { problem: 'must not carry credentials' }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (targets === 'any') return { url, address: host }
  if (url.port !== '' && !['80', '443'].includes(url.port)) return { problem: 'must use port 80 or 443 (this sandbox delivers only to public addresses)' }
  const address = await publicAddress(host)
  return address ? { url, address } : { problem: 'must name a host with only public addresses (this sandbox delivers only to public addresses)' }
}

/** The address to connect to when every address of `host` is public, else null. */
async function publicAddress(host: string): Promise<string | null> {
  if (isIP(host)) return isPublicAddress(host) ? host : null
  try {
    const addresses = await lookup(host, { all: true, verbatim: true })
    return addresses.length > 0 && addresses.every(({ address }) => isPublicAddress(address)) ? addresses[0]!.address : null
  } catch {
    return null
  }
}

/** Why a webhook URL cannot be registered (words for `details`), or null. */
export async function targetProblem(raw: string, targets: Targets): Promise<string | null> {
  const target = await resolveTarget(raw, targets)
  return 'problem' in target ? target.problem : null
}

export type CallOutcome = { status: number } | { error: 'timeout' | 'connection_failed' | 'target_refused' }

/** POSTs `body` to `raw`, checking the target again first; never throws. The 5 s include resolving the host name. */
export function postJson(raw: string, body: string, headers: Record<string, string>, targets: Targets): Promise<CallOutcome> {
  let call: ClientRequest | undefined
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<CallOutcome>((resolve) => {
    timer = setTimeout(() => {
      call?.destroy()
      resolve({ error: 'timeout' })
    }, CALL_TIMEOUT_MS)
  })
  const attempt = resolveTarget(raw, targets).then((target) => {
    if ('problem' in target) return { error: 'target_refused' as const }
    return new Promise<CallOutcome>((resolve) => {
      call = send(target.url, target.address, body, headers, resolve)
    })
  })
  return Promise.race([attempt, timedOut]).finally(() => clearTimeout(timer))
}

/** One POST to `address` (the checked one) in the URL's name; at most 64 KiB of the answer is read. */
function send(url: URL, address: string, body: string, headers: Record<string, string>, done: (outcome: CallOutcome) => void): ClientRequest {
  const https = url.protocol === 'https:'
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const call = (https ? httpsRequest : httpRequest)({
    host: address,
    // TLS checks the certificate against the name, not the address connected to.
    servername: https && !isIP(host) ? host : undefined,
    port: url.port || (https ? 443 : 80),
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers: { ...headers, host: url.host, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) },
  }, (answer: IncomingMessage) => {
    let read = 0
    answer.on('data', (chunk: Buffer) => {
      read += chunk.length
      if (read > ANSWER_LIMIT) answer.destroy()
    })
    answer.on('close', () => done({ status: answer.statusCode ?? 0 }))
    answer.on('error', () => done({ status: answer.statusCode ?? 0 }))
  })
  call.on('error', () => done({ error: 'connection_failed' }))
  call.end(body)
  return call
}
