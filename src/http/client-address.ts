/**
 * @module Who is calling, for the per-network counter: the socket's peer, or with
 * `SANDBOX_TRUST_PROXY=N` the Nth address from the right of `X-Forwarded-For`.
 */
import { isIP } from 'node:net'

export function clientAddress(request: Request, peer: string | undefined, trustProxy: number): string {
  const socket = peer ?? 'unknown'
  if (trustProxy === 0) return socket
  const forwarded = (request.headers.get('x-forwarded-for') ?? '').split(',').map((entry) => entry.trim()).filter(Boolean)
  // With N trusted proxies the Nth entry from the right is the last one a trusted proxy wrote.
  const candidate = forwarded.at(-trustProxy) ?? forwarded[0]
  return candidate && isIP(candidate) ? candidate : socket
}

/** The rate-limit network: an IPv4 address, or the /64 an IPv6 address belongs to. */
export function networkOf(address: string): string {
  const bare = address.replace(/%.*$/, '')
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare)
  if (mapped) return mapped[1]!
  if (isIP(bare) !== 6) return bare
  const [head = '', tail = ''] = bare.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = bare.includes('::') ? (tail ? tail.split(':') : []) : []
  const groups = [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  return `${groups.slice(0, 4).map((group) => group.replace(/^0+(?=.)/, '')).join(':')}::/64`
}

/** Whether the caller reached us over HTTPS, directly or through a trusted proxy. */
export function arrivedOverHttps(request: Request, trustProxy: number): boolean {
  if (new URL(request.url).protocol === 'https:') return true
  return trustProxy > 0 && request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https'
}
