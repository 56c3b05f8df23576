/**
 * @module Outbound webhook calls, the sandbox's one way of reaching other hosts on a partner's word.
 * With `public` targets (hosted) a URL may name only a public address over HTTP(S) on port 80 or
 * 443; its host name is resolved and every address checked, and the call goes to the checked
 * address itself, so DNS cannot swap in another between check and connect. Everywhere: no redirect
 * is followed, a call ends after 5 s, at most 64 KiB of the answer is read, and only its status
 * is kept.
 */
import { lookup } from 'node:dns/promises'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { BlockList, isIP } from 'node:net'

export type Targets = 'any' | 'public'

export const CALL_TIMEOUT_MS = 5_000
const ANSWER_LIMIT = 64 * 1024

/** Addresses that are not on the public internet: loopback, private, link-local, shared, reserved, documentation, multicast. */
const NOT_PUBLIC = new BlockList()
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12], ['192.0.0.0', 24],
  ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv4')
for (const [network, prefix] of [
  ['::', 127], ['64:ff9b::', 96], ['100::', 64], ['2001::', 23], ['2001:db8::', 32], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8],
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv6')

export function isPublicAddress(address: string): boolean {
  const family = isIP(address)
  if (family === 0) return false
  const mapped = family === 6 ? mappedIpv4(address) : null
  if (mapped) return !NOT_PUBLIC.check(mapped, 'ipv4')
  return !NOT_PUBLIC.check(address, family === 6 ? 'ipv6' : 'ipv4')
}

/**
 * The IPv4 address an IPv4-mapped IPv6 address carries (`::ffff:127.0.0.1`, or `::ffff:7f00:1` as
 * URLs write it), which is judged as that IPv4 address: runtimes disagree on whether BlockList does.
 */
function mappedIpv4(address: string): string | null {
  const match = /^(?:0{1,4}:){0,4}:?(?:0{1,4}:)?ffff:(?:(\d+\.\d+\.\d+\.\d+)|([0-9a-f]{1,4}):([0-9a-f]{1,4}))$/i.exec(address)
  if (!match) return null
  if (match[1]) return match[1]
  const [high, low] = [parseInt(match[2]!, 16), parseInt(match[3]!, 16)]
  return [high >> 8, high & 255, low >> 8, low & 255].join('.')
}

/** Why a webhook URL cannot be registered (words for `details`), or null. Resolves its host name for `public`. */
export async function targetProblem(raw: string, targets: Targets): Promise<string | null> {
  const url = URL.canParse(raw) ? new URL(raw) : null
  if (!url || !['http:', 'https:'].includes(url.protocol)) return 'must be an http or https URL'
  if (url.username || url.password) return 'must not carry credentials'
  if (targets === 'any') return null
  if (url.port !== '' && !['80', '443'].includes(url.port)) return 'must use port 80 or 443 (this sandbox delivers only to public addresses)'
  return (await publicAddress(url.hostname)) ? null : 'must name a host with only public addresses (this sandbox delivers only to public addresses)'
}

/** The address to connect to when every address of `hostname` is public, else null. */
async function publicAddress(hostname: string): Promise<string | null> {
  const bare = hostname.replace(/^\[|\]$/g, '')
  if (isIP(bare)) return isPublicAddress(bare) ? bare : null
  try {
    const addresses = await lookup(bare, { all: true, verbatim: true })
    return addresses.length > 0 && addresses.every(({ address }) => isPublicAddress(address)) ? addresses[0]!.address : null
  } catch {
    return null
  }
}

export type CallOutcome = { status: number } | { error: 'timeout' | 'connection_failed' | 'target_refused' }

/** POSTs `body` to `raw`; never throws. */
export async function postJson(raw: string, body: string, headers: Record<string, string>, targets: Targets): Promise<CallOutcome> {
  const url = new URL(raw)
  const host = url.hostname.replace(/^\[|\]$/g, '')
  let address = host
  if (targets === 'public') {
    if (await targetProblem(raw, 'public')) return { error: 'target_refused' }
    address = (await publicAddress(url.hostname)) ?? ''
    if (!address) return { error: 'target_refused' }
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve) => {
    const done = (outcome: CallOutcome) => {
      clearTimeout(timer)
      resolve(outcome)
    }
    const call = send({
      host: address,
      servername: isIP(host) ? undefined : host,
      port: url.port || (url.protocol === 'https:' ? 443 : 80),
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
    const timer = setTimeout(() => {
      call.destroy()
      done({ error: 'timeout' })
    }, CALL_TIMEOUT_MS)
    call.on('error', () => done({ error: 'connection_failed' }))
    call.end(body)
  })
}
