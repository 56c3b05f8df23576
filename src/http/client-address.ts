/**
 * @module Who is calling, for the per-network counter: the socket's peer, or with
 * `SANDBOX_TRUST_PROXY=N` the Nth address from the right of `X-Forwarded-For`.
 */
import { isIP } from 'node:net'

export function clientAddress(request: Request, peer: () => string | undefined, trustProxy: number): string {
  if (trustProxy > 0) {
    const forwarded = (request.headers.get('x-forwarded-for') ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter(Boolean)
    // With N trusted proxies the Nth entry from the right is the last one a trusted proxy wrote; with
    // fewer entries than that, none of them can be trusted.
    const candidate = forwarded.length >= trustProxy ? entryAddress(forwarded.at(-trustProxy)!) : undefined
    if (candidate) return candidate
  }
  // Asked only when needed: the runtime's lookup of the socket's peer (Bun's `requestIP`) was 4% of
  // a refused (429) call's CPU behind a trusted proxy, where it goes unused (Bun's CPU profile).
  return peer() ?? 'unknown'
}

/**
 * An `X-Forwarded-For` entry's address, also where a load balancer wrote its port or brackets
 * (`203.0.113.7:41234`, `[2001:db8::7]:443`, `[2001:db8::7]`); undefined when it holds none.
 */
function entryAddress(entry: string): string | undefined {
  const [, address = entry] = /^\[([^\]]*)\](?::\d{1,5})?$/.exec(entry) ?? /^([\d.]+):\d{1,5}$/.exec(entry) ?? []
  return isIP(address) ? address : undefined
}

/** The rate-limit network: an IPv4 address (also when IPv4-mapped), or an IPv6 address's /64. */
export function networkOf(address: string): string {
  const bare = address.replace(/%.*$/, '')
  if (isIP(bare) !== 6) return bare
  const groups = ipv6Groups(bare)
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.')
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`
}

/** The eight 16-bit groups of a valid IPv6 address, `::` expanded and a dotted IPv4 tail folded in. */
function ipv6Groups(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address)
  const hex = dotted
    ? address.slice(0, dotted.index) + [(+dotted[1]! << 8) | +dotted[2]!, (+dotted[3]! << 8) | +dotted[4]!].map((n) => n.toString(16)).join(':')
    : address
  const [head = '', tail] = hex.toLowerCase().split('::')
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const zeros = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0')
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16))
}

/** The client network's rate-limit counter key. */
export function networkKey(request: Request, peer: () => string | undefined, trustProxy: number): string {
  return `n:${networkOf(clientAddress(request, peer, trustProxy))}`
}

/** Whether the caller reached us over HTTPS, directly or through a trusted proxy. */
export function arrivedOverHttps(request: Request, trustProxy: number): boolean {
  // Not `new URL(request.url)`: without a usable Host (HTTP/1.0, an empty or malformed `Host:`) Bun
  // hands over a bare path, which no URL parser accepts.
  if (/^https:/i.test(request.url)) return true
  return trustProxy > 0 && request.headers.get('x-forwarded-proto')?.split(',')[0]?.trim().toLowerCase() === 'https'
}

/**
 * The origin the client used: the request's own, or behind trusted proxies the scheme and host the
 * proxy forwards (read as the cookie's Secure is). The OpenAPI document's `servers` entry and the
 * console link's origin, so neither needs a base URL to be useful. Without a usable Host (HTTP/1.0,
 * a malformed `Host:`) Bun hands over a bare path: then `/`, the origin the client used, whatever it
 * was.
 */
export function requestOrigin(request: Request, trustProxy: number): string {
  if (!URL.canParse(request.url)) return '/'
  const own = new URL(request.url)
  const host = trustProxy > 0 ? request.headers.get('x-forwarded-host')?.split(',')[0]?.trim() : undefined
  const candidate = `${arrivedOverHttps(request, trustProxy) ? 'https' : own.protocol.slice(0, -1)}://${host || own.host}`
  return URL.canParse(candidate) ? new URL(candidate).origin : own.origin
}

/** Whether the request was addressed to this machine by a loopback name (`localhost`, `127.0.0.1`, `[::1]`). */
export function addressedToLoopback(request: Request): boolean {
  const host = (request.headers.get('host') ?? '').toLowerCase().replace(/:\d+$/, '')
  return host === 'localhost' || host.endsWith('.localhost') || host === '[::1]' || /^127(?:\.\d{1,3}){3}$/.test(host)
}
