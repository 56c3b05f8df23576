/**
 * Webhook signatures (the typed client's `verifyWebhook` is this one) and which targets a hosted
 * sandbox refuses, without sending anything anywhere.
 */
import { describe, expect, test } from 'bun:test'
import { signatureHeader, verifyWebhook } from '../../src/modules/events/signature'
import { hostNames, type Targets } from '../../src/modules/events/host-names'
import { isPublicAddress, postJson as post, targetProblem as problemOf } from '../../src/modules/events/outbound'

const SECRET = 'whsec_0123456789abcdef0123456789abcdef0123456789abcdef'
const BODY = '{"id":"evt_00000000000000000001","type":"webhook.test"}'
const NOW = Date.parse('2026-11-25T10:00:00Z')
const T = NOW / 1000

/** Polls `condition` until it holds (5 s at most). */
async function waitFor(condition: () => boolean): Promise<void> {
  for (const end = Date.now() + 5_000; !condition(); await Bun.sleep(20)) if (Date.now() > end) throw new Error('not met within 5 s')
}

const names = (targets: Targets) => ({ hostNames: hostNames(targets), callers: ['s:1'] })
const targetProblem = (url: string, targets: Targets) => problemOf(url, targets, names(targets))
const postJson = (url: string, body: string, headers: Record<string, string>, targets: Targets) => post(url, body, headers, targets, names(targets))

describe('Sandbox-Signature', () => {
  test('is t=<seconds>,v1=<hex HMAC-SHA256 of "t.body">, as Stripe signs', async () => {
    const expected = new Bun.CryptoHasher('sha256', SECRET).update(`${T}.${BODY}`).digest('hex')
    expect(signatureHeader(SECRET, T, BODY)).toBe(`t=${T},v1=${expected}`)
  })

  test('verifies the raw body under the secret within five minutes, and nothing else', () => {
    const header = signatureHeader(SECRET, T, BODY)
    expect(verifyWebhook(SECRET, header, BODY, { now: NOW })).toBe(true)
    expect(verifyWebhook(SECRET, header, BODY, { now: NOW + 300_000 })).toBe(true)
    expect(verifyWebhook(SECRET, header, BODY, { now: NOW + 301_000 })).toBe(false) // a replay, later
    expect(verifyWebhook(`${SECRET}x`, header, BODY, { now: NOW })).toBe(false)
    expect(verifyWebhook(SECRET, header, BODY.replace('test', 'tesT'), { now: NOW })).toBe(false)
    expect(verifyWebhook(SECRET, header, JSON.stringify(JSON.parse(BODY), null, 1), { now: NOW })).toBe(false) // re-serialised
    for (const bad of [null, undefined, '', 't=abc,v1=00', `t=${T}`, `v1=${'0'.repeat(64)}`, header.replace(/v1=../, 'v1=zz')]) {
      expect(verifyWebhook(SECRET, bad, BODY, { now: NOW })).toBe(false)
    }
  })
})

describe('hosted targets', () => {
  test('only public addresses are public', () => {
    for (const address of ['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '::ffff:808:808'])
      expect(isPublicAddress(address), address).toBe(true)
    for (const address of [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.0.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '255.255.255.255',
      '198.18.0.1',
      '192.0.2.1',
      '::1',
      '::',
      'fe80::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:7f00:1',
      '0:0:0:0:0:ffff:a00:1',
      '::ffff:a9fe:a9fe',
      '::ffff:0:127.0.0.1',
      '::ffff:0:7f00:1',
      '2002:7f00:1::',
      '2002:c000:202::1',
      '2001:db8::1',
      'not-an-address',
    ])
      expect(isPublicAddress(address), address).toBe(false)
  })

  test('public targets: http(s) on ports 80 and 443 to hosts with only public addresses; any: every http(s) URL', async () => {
    expect(await targetProblem('https://93.184.215.14/hooks', 'public')).toBeNull()
    expect(await targetProblem('http://93.184.215.14:80/hooks', 'public')).toBeNull()
    expect(await targetProblem('http://93.184.215.14:8080/hooks', 'public')).toMatch(/port 80 or 443/)
    for (const url of [
      'http://127.0.0.1/',
      'http://localhost/',
      'http://api.localhost/',
      'http://[::1]/',
      'http://169.254.169.254/',
      'http://[::ffff:7f00:1]/',
    ]) {
      expect(await targetProblem(url, 'public'), url).toMatch(/public addresses/)
    }
    expect(await targetProblem('http://127.0.0.1:4000/hooks', 'any')).toBeNull()
    expect(await targetProblem('ftp://127.0.0.1/', 'any')).toBe('must be an http or https URL')
    expect(await targetProblem('http://a:b@127.0.0.1/', 'any')).toBe('must not carry credentials')
  })
})

describe('outbound calls', () => {
  /** A loopback server answering each call with `answer`; closed after the test. */
  async function serving(answer: (response: import('node:http').ServerResponse) => void) {
    const { createServer } = await import('node:http')
    const calls: string[] = []
    const server = createServer((request, response) => {
      calls.push(request.url!)
      request.resume().on('end', () => answer(response))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as import('node:net').AddressInfo
    return {
      url: `http://127.0.0.1:${port}/hooks`,
      server,
      calls,
      close: () => {
        server.closeAllConnections()
        server.close()
      },
    }
  }

  test('a redirect is not followed: its status is the outcome', async () => {
    const target = await serving((response) => response.writeHead(302, { location: '/elsewhere' }).end())
    try {
      expect(await postJson(target.url, '{}', {}, 'any')).toEqual({ status: 302 })
      expect(target.calls).toEqual(['/hooks'])
      expect(await postJson(target.url.replace('127.0.0.1', 'localhost'), '{}', {}, 'any')).toEqual({ status: 302 })
    } finally {
      target.close()
    }
  })

  test('an endless answer is cut after 64 KiB; the status stands', async () => {
    const target = await serving((response) => {
      response.writeHead(200)
      const chunk = Buffer.alloc(16 * 1024, 'x')
      const write = () => {
        while (response.write(chunk));
        response.once('drain', write)
      }
      write()
    })
    try {
      expect(await postJson(target.url, '{}', {}, 'any')).toEqual({ status: 200 })
    } finally {
      target.close()
    }
  })

  test('no answer within 5 s is a timeout, and the connection is closed then', async () => {
    let open = 0
    const target = await serving(() => {})
    target.server.on('connection', (socket) => {
      open++
      socket.on('close', () => open--)
    })
    try {
      const started = performance.now()
      expect(await postJson(target.url, '{}', {}, 'any')).toEqual({ error: 'timeout' })
      expect(performance.now() - started).toBeGreaterThanOrEqual(4_900)
      await waitFor(() => open === 0)
    } finally {
      target.close()
    }
  })

  test("an address that refuses the connection passes the call to the name's next one: localhost reaches a receiver on ::1 alone", async () => {
    const { createServer } = await import('node:http')
    const server = createServer((request, response) => request.resume().on('end', () => response.writeHead(204).end()))
    const listening = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false))
      server.listen(0, '::1', () => resolve(true))
    })
    if (!listening) return console.log('skipped: this machine has no IPv6 loopback')
    const { port } = server.address() as import('node:net').AddressInfo
    try {
      expect(await postJson(`http://localhost:${port}/hooks`, '{}', {}, 'any')).toEqual({ status: 204 })
    } finally {
      server.close()
    }
  })

  test('public targets: a loopback URL is refused without a connection', async () => {
    const target = await serving((response) => response.writeHead(200).end())
    try {
      expect(await postJson(target.url, '{}', {}, 'public')).toEqual({ error: 'target_refused' })
      expect(target.calls).toEqual([])
    } finally {
      target.close()
    }
  })
})
