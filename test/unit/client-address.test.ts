import { describe, expect, test } from 'bun:test'
import { arrivedOverHttps, clientAddress, networkOf } from '../../src/http/client-address'

const PEER = '10.0.0.1'
const peer = () => PEER
const request = (forwardedFor?: string, url = 'http://localhost/api/sandbox/session', proto?: string) =>
  new Request(url, {
    method: 'POST',
    headers: { ...(forwardedFor !== undefined && { 'x-forwarded-for': forwardedFor }), ...(proto && { 'x-forwarded-proto': proto }) },
  })

describe('clientAddress', () => {
  test('with trust 0 the socket peer is used and X-Forwarded-For is ignored', () => {
    expect(clientAddress(request('203.0.113.9'), peer, 0)).toBe(PEER)
    expect(clientAddress(request('203.0.113.9, 198.51.100.7'), peer, 0)).toBe(PEER)
  })

  test('with trust 0 and no socket every call is "unknown"', () => {
    expect(clientAddress(request('203.0.113.9'), () => undefined, 0)).toBe('unknown')
  })

  test('with trust 1 the rightmost entry is the client (what our proxy saw)', () => {
    expect(clientAddress(request('203.0.113.9'), peer, 1)).toBe('203.0.113.9')
    // The caller can prepend anything; only the entry our proxy appended counts.
    expect(clientAddress(request('1.1.1.1, 203.0.113.9'), peer, 1)).toBe('203.0.113.9')
    expect(clientAddress(request(' 1.1.1.1 ,  203.0.113.9 '), peer, 1)).toBe('203.0.113.9')
  })

  test('the socket peer is not looked up when a trusted entry names the client', () => {
    let asked = 0
    const counted = () => (asked++, PEER)
    expect(clientAddress(request('203.0.113.9'), counted, 1)).toBe('203.0.113.9')
    expect(asked).toBe(0)
    expect(clientAddress(request('not-an-ip'), counted, 1)).toBe(PEER)
    expect(asked).toBe(1)
  })

  test('with trust 2 the second entry from the right is the client', () => {
    expect(clientAddress(request('1.1.1.1, 203.0.113.9, 192.168.0.2'), peer, 2)).toBe('203.0.113.9')
    expect(clientAddress(request('spoofed, 2001:db8::7, 192.168.0.2'), peer, 2)).toBe('2001:db8::7')
  })

  test('an entry with a port or brackets, as some load balancers write it, is read as its address', () => {
    expect(clientAddress(request('203.0.113.9:41234'), peer, 1)).toBe('203.0.113.9')
    expect(clientAddress(request('[2001:db8::7]:443'), peer, 1)).toBe('2001:db8::7')
    expect(clientAddress(request('[2001:db8::7]'), peer, 1)).toBe('2001:db8::7')
    expect(clientAddress(request('1.1.1.1:80, 203.0.113.9:41234'), peer, 1)).toBe('203.0.113.9')
    // Two clients behind one proxy stay two networks.
    expect(networkOf(clientAddress(request('203.0.113.9:1'), peer, 1))).not.toBe(networkOf(clientAddress(request('203.0.113.10:1'), peer, 1)))
  })

  test('a missing header or an invalid chosen entry falls back to the peer', () => {
    expect(clientAddress(request(), peer, 1)).toBe(PEER)
    expect(clientAddress(request(''), peer, 1)).toBe(PEER)
    expect(clientAddress(request('203.0.113.9, not-an-ip'), peer, 1)).toBe(PEER)
    expect(clientAddress(request('203.0.113.9, 1.2.3.4:567890'), peer, 1)).toBe(PEER)
    expect(clientAddress(request('[203.0.113.9'), peer, 1)).toBe(PEER)
    expect(clientAddress(request('[not-an-ip]:80'), peer, 1)).toBe(PEER)
    expect(clientAddress(request('2001:db8::7:443'), peer, 1)).toBe('2001:db8::7:443') // a bare IPv6 address, not one with a port
    expect(clientAddress(request('999.1.1.1'), peer, 1)).toBe(PEER)
    expect(clientAddress(request('garbage, 192.168.0.2'), peer, 2)).toBe(PEER)
    expect(clientAddress(request(), () => undefined, 1)).toBe('unknown')
  })
})

describe('networkOf', () => {
  test('an IPv4 address is its own network', () => {
    expect(networkOf('203.0.113.9')).toBe('203.0.113.9')
    expect(networkOf('203.0.113.9')).not.toBe(networkOf('203.0.113.10'))
  })

  test('IPv6 addresses in one /64 share a network', () => {
    const a = networkOf('2001:db8:1:2:3:4:5:6')
    expect(networkOf('2001:db8:1:2::9')).toBe(a)
    expect(networkOf('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe(a)
    expect(networkOf('2001:DB8:1:2::')).toBe(a)
    expect(networkOf('2001:db8:1:2::9%eth0')).toBe(a)
    expect(a).toBe('2001:db8:1:2::/64')
  })

  test('IPv6 addresses in different /64s do not', () => {
    expect(networkOf('2001:db8:1:3::9')).not.toBe(networkOf('2001:db8:1:2::9'))
    expect(networkOf('2001:db8::1')).not.toBe(networkOf('2001:db8:0:1::1'))
    expect(networkOf('2001:db8::1')).toBe(networkOf('2001:db8:0:0:ffff::1'))
    expect(networkOf('::1')).not.toBe(networkOf('2001:db8::1'))
  })

  test('an IPv4-mapped IPv6 address is the IPv4 address', () => {
    expect(networkOf('::ffff:1.2.3.4')).toBe('1.2.3.4')
    expect(networkOf('::FFFF:1.2.3.4')).toBe('1.2.3.4')
    expect(networkOf('::ffff:1.2.3.4')).not.toBe(networkOf('::ffff:1.2.3.5'))
  })

  test('an IPv4-mapped address in any IPv6 spelling is still that IPv4 address', () => {
    // Otherwise every such client lands in the one network 0:0:0:0::/64 and shares its allowance.
    expect(networkOf('0:0:0:0:0:ffff:1.2.3.4')).toBe('1.2.3.4')
    expect(networkOf('::ffff:102:304')).toBe('1.2.3.4')
    expect(networkOf('::ffff:102:304')).not.toBe(networkOf('::ffff:506:708'))
  })
})

describe('arrivedOverHttps', () => {
  test('direct HTTPS, or X-Forwarded-Proto only from a trusted proxy', () => {
    expect(arrivedOverHttps(request(undefined, 'https://localhost/x'), 0)).toBe(true)
    expect(arrivedOverHttps(request(undefined, 'http://localhost/x', 'https'), 0)).toBe(false)
    expect(arrivedOverHttps(request(undefined, 'http://localhost/x', 'https'), 1)).toBe(true)
    expect(arrivedOverHttps(request(undefined, 'http://localhost/x', 'http'), 1)).toBe(false)
    expect(arrivedOverHttps(request(undefined, 'http://localhost/x'), 1)).toBe(false)
  })
})
