/**
 * @module A DNS server of the tests' own, for names that must misbehave, inside a network namespace
 * whose /etc/resolv.conf names it (dns-attack.ts). Names are read by their last labels:
 * - `*.ok.test`: A `11.0.0.1` (an address the namespace gives its own loopback: public-looking,
 *   and nowhere outside the namespace);
 * - `*.loopback.test`: A `127.0.0.1` (for the insurer, which may be anywhere);
 * - `*.hang.test`: never answered;
 * - `*.once.test`: answered (as `ok`) the first time a name is asked each type, never after;
 * - `*.late.test`: the same, but later questions are answered after LATE_MS.
 * Every other name is NXDOMAIN; AAAA questions get no records.
 */
import { createSocket } from 'node:dgram'
import { decode, encode, type Packet } from 'dns-packet'

export const PUBLIC_ADDRESS = '11.0.0.1'
export const LATE_MS = 6_000

export function startDnsServer(port = 53, host = '127.0.0.1'): Promise<{ asked: Map<string, number>; close(): void }> {
  const asked = new Map<string, number>()
  const socket = createSocket('udp4')
  socket.on('message', (message, from) => {
    let query: Packet
    try {
      query = decode(message)
    } catch {
      return
    }
    const question = query.questions?.[0]
    if (!question) return
    const name = question.name.toLowerCase()
    const times = (asked.get(`${name} ${question.type}`) ?? 0) + 1
    asked.set(`${name} ${question.type}`, times)
    if (name.endsWith('.hang.test') || (name.endsWith('.once.test') && times > 1)) return
    const address = name.endsWith('.loopback.test') ? '127.0.0.1' : /\.(ok|once|late)\.test$/.test(name) ? PUBLIC_ADDRESS : null
    const answers = address && question.type === 'A' ? [{ type: 'A' as const, name: question.name, ttl: 1, data: address }] : []
    const known = address !== null
    const answer = () =>
      socket.send(
        encode({
          id: query.id,
          type: 'response',
          flags: (known ? 0 : 3) | 0x8000 | 0x0400 | 0x0100 | 0x0080, // NOERROR or NXDOMAIN; QR, AA, RD, RA
          questions: query.questions,
          answers,
        }),
        from.port,
        from.address,
      )
    if (name.endsWith('.late.test') && times > 1) setTimeout(answer, LATE_MS)
    else answer()
  })
  return new Promise((resolve) => socket.bind(port, host, () => resolve({ asked, close: () => socket.close() })))
}
