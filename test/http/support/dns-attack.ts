/**
 * @module A partner whose webhook names stop answering DNS, and another partner beside it: run
 * inside a network namespace of its own (namespace.ts) with a DNS server of its own
 * (dns-server.ts), a receiver on 11.0.0.1:80 and the stand-in insurer reached by a host name. It
 * starts a hosted sandbox (`SANDBOX_WEBHOOK_TARGETS=public`, the default fair-use limits), measures
 * the other partner's calls and deliveries before and during the attack, and prints one line:
 * `RESULT {json}`. webhook-isolation.spec.ts asserts on it; run by hand against another checkout's
 * server (SANDBOX_SERVER_COMMAND) it gives the figures before a change.
 *
 * The attack (an adversarial review's): from one network, 14 sessions register names whose DNS
 * answers once and then never, and send a test event each (28 calls, within the allowance).
 * Then a name whose DNS answers only after LATE_MS, longer than a delivery's deadline.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, launch, runtimeCommand, sleep, type Runtime } from '../../support/launch'
import { startDnsServer, LATE_MS, PUBLIC_ADDRESS } from './dns-server'

const ATTACKERS = 14
/** The longest any one call or delivery is waited for (a sandbox before the fix took minutes). */
const WAIT_MS = 90_000

const dns = await startDnsServer()
const arrivals: { host: string; at: number }[] = []
const receiver = createServer((request, response) => {
  request.resume().on('end', () => {
    arrivals.push({ host: String(request.headers.host), at: Date.now() })
    response.writeHead(200).end('ok')
  })
})
await new Promise<void>((resolve) => receiver.listen(80, PUBLIC_ADDRESS, resolve))

const standIn = await launch({ command: ['bun', 'test/uat-stand-in/server.ts'], port: await freePort(), readyPath: '/__stats' })
const folder = mkdtempSync(join(tmpdir(), 'dns-attack-'))
const command = process.env.SANDBOX_SERVER_COMMAND?.split(' ') ?? runtimeCommand((process.env.SANDBOX_RUNTIME ?? 'bun') as Runtime)
const sandbox = await launch({
  command,
  port: await freePort(),
  env: {
    // A file no earlier run used (in a namespace of processes, every run has the same pid).
    SANDBOX_DB_PATH: join(folder, 'sandbox.db'),
    SANDBOX_WEBHOOK_TARGETS: 'public',
    SANDBOX_TRUST_PROXY: '1',
    SANDBOX_UAT_URL: `http://insurer.loopback.test:${new URL(standIn.url).port}`,
  },
})

/** A partner's client on its own network, keeping its session cookie. */
function partner(network: string) {
  let cookie = ''
  return async (path: string, body?: unknown): Promise<{ status: number; body: any; ms: number }> => {
    const started = performance.now()
    const response = await fetch(`${sandbox.url}/api/sandbox${path}`, {
      method: 'POST',
      headers: { 'x-forwarded-for': network, ...(cookie && { cookie }), ...(body !== undefined && { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(WAIT_MS),
    }).catch(() => null)
    if (!response) return { status: 0, body: {}, ms: WAIT_MS }
    const set = response.headers
      .getSetCookie()
      .map((line) => line.split(';')[0])
      .join('; ')
    if (set) cookie = set
    return { status: response.status, body: await response.json(), ms: Math.round(performance.now() - started) }
  }
}

/** Ms from sending a test event to its arrival at the receiver under `host` (null: not within WAIT_MS). */
async function oneDeliveryMs(call: ReturnType<typeof partner>, host: string): Promise<number | null> {
  const before = arrivals.filter((arrival) => arrival.host === host).length
  const sentAt = Date.now()
  await call('/webhook/test')
  for (const end = Date.now() + WAIT_MS; Date.now() < end; await sleep(10)) {
    const arrived = arrivals.filter((arrival) => arrival.host === host)
    if (arrived.length > before) return arrived.at(-1)!.at - sentAt
  }
  return null
}

/** The median of three deliveries, one after another. */
async function deliveryMs(call: ReturnType<typeof partner>, host: string): Promise<number | null> {
  const times: (number | null)[] = []
  for (let sample = 0; sample < 3; sample++) times.push(await oneDeliveryMs(call, host))
  return times.sort((a, b) => (a ?? Infinity) - (b ?? Infinity))[1]!
}

const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
const search = { trip: { origin_country: 'IN', destination_country: 'FR', start_date: day(30), end_date: day(40) }, travellers: [{ age: 34 }], currency: 'EUR' }

/**
 * What other partners see, at once: one registers an endpoint (a name of its own), one searches
 * plans (through the insurer's host name), and one already registered gets a test event.
 */
async function otherPartners(round: string, deliveries: ReturnType<typeof partner>) {
  const [register, plans, delivery_ms] = await Promise.all([
    partner(`198.51.100.${round === 'before' ? 1 : 2}`)('/webhook', { url: `http://${round}.ok.test/` }),
    partner(`198.51.100.${round === 'before' ? 3 : 4}`)('/plans/search', search),
    deliveryMs(deliveries, 'victim.ok.test'),
  ])
  return {
    register_status: register.status,
    register_ms: register.ms,
    search_status: plans.status,
    search_mode: plans.body.mode,
    search_ms: plans.ms,
    delivery_ms,
  }
}

const result: Record<string, unknown> = {}
try {
  const deliveries = partner('198.51.100.7')
  await deliveries('/webhook', { url: 'http://victim.ok.test/' })
  result.before = await otherPartners('before', deliveries)

  const attackers = Array.from({ length: ATTACKERS }, () => partner('203.0.113.66'))
  const registered = await Promise.all(attackers.map((call, index) => call('/webhook', { url: `http://a${index}.once.test/` })))
  result.attack_registrations = registered.map((answer) => (answer.status === 200 ? 200 : `${answer.status} ${answer.body.error?.code} ${answer.ms} ms`))
  result.attack_test_events = (await Promise.all(attackers.map((call) => call('/webhook/test')))).map((answer) => answer.status)
  // The attack's deliveries are out (their second lookups asked, and hanging) before the others call.
  const hanging = () => attackers.every((_, index) => (dns.asked.get(`a${index}.once.test A`) ?? 0) > 1)
  for (const end = Date.now() + 15_000; !hanging() && Date.now() < end; ) await sleep(20)
  result.attack_lookups_hanging = hanging()
  result.during = await otherPartners('during', deliveries)

  // A name that answers after a delivery's deadline: the attempt times out and nothing is ever sent.
  const late = partner('192.0.2.200')
  result.late_register_status = (await late('/webhook', { url: 'http://l.late.test/' })).status
  await late('/webhook/test')
  await sleep(LATE_MS + 3_000)
  result.late_posts = arrivals.filter((arrival) => arrival.host === 'l.late.test').length
  result.late_attempts = (await late('/events', {})).body.data.events[0]?.delivery?.attempts.map(
    (attempt: { error: string | null; status: number | null }) => attempt.error ?? attempt.status,
  )
} catch (error) {
  result.error = String(error)
} finally {
  console.log(`RESULT ${JSON.stringify(result)}`)
  await sandbox.stop('SIGKILL')
  await standIn.stop('SIGKILL')
  receiver.close()
  dns.close()
  rmSync(folder, { recursive: true, force: true })
  process.exit(0)
}
