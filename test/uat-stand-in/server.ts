/**
 * A stand-in for an insurer's UAT environment, speaking the generic insurer UAT protocol the
 * gateway expects (README, "UAT gateway"), with insurer-specific product codes, labels, benefit
 * codes and reference formats. For tests, demos and local use:
 *
 *   PORT=4400 bun test/uat-stand-in/server.ts
 *   SANDBOX_UAT_URL=http://127.0.0.1:4400 npm start
 *
 * It sells the catalogue's products under its own codes and prices them with the same formula,
 * so the sandbox answers the same plans in both modes. It can be told to misbehave:
 *
 *   POST /__control {"fault":"slow"|"error"|"reset"|"malformed"|"leak"|"decline"|"none","delay_ms":3000,"count":2}
 *   GET  /__stats   calls seen, policies bound, endorsements made, cancellations, calls still being answered
 *   GET  /__labels  every insurer string that must never reach a sandbox client
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { createHash } from 'node:crypto'
import mapping from '../../data/insurer-products.json'
import { loadCatalogue } from '../../src/modules/plans/catalogue'
import { premiumInPaise, priceCatalogue, toMinorUnits } from '../../src/modules/plans/pricing'
import { refundOf } from '../../src/modules/policies/refund'
import { todayDayNumber } from '../../src/domain/dates'

type Trip = { origin_country: string; destination_country: string; start_date: string; end_date: string }
type Fault = 'none' | 'slow' | 'error' | 'reset' | 'malformed' | 'leak' | 'decline'

const catalogue = loadCatalogue()
const CODE_OF = Object.fromEntries(Object.entries(mapping.products).map(([code, product]) => [product, code])) as Record<string, string>
const LABEL_OF: Record<string, string> = {
  'ACM-DOM-BASIC': 'Acme Bharat Yatra Basic',
  'ACM-DOM-PLUS': 'Acme Bharat Yatra Plus',
  'ACM-ASIA-LITE': 'Acme Asia Explorer Lite',
  'ACM-INT-BRONZE': 'Acme Globetrotter Bronze',
  'ACM-INT-SILVER': 'Acme Globetrotter Silver',
  'ACM-INT-GOLD': 'Acme Globetrotter Gold Elite',
}
const TIER_OF: Record<string, string> = { essential: 'ACM-T1-BRONZE', standard: 'ACM-T2-SILVER', premium: 'ACM-T3-GOLD' }
const BENEFIT_CODES = ['ACM-MEDX-01', 'ACM-EVAC-02', 'ACM-CANX-03', 'ACM-BAGG-04']

const quotes = new Map<string, { trip: Trip; ages: number[]; product: string; currency: string }>()
const policies = new Map<string, { trip: Trip; ages: number[]; product: string; currency: string; premium: number; cancelled: boolean }>()
const answered = new Map<string, { status: number; body: unknown }>()
const stats = { calls: 0, bound: 0, endorsements: 0, cancellations: 0, pending: 0 }
let fault: { kind: Fault; delayMs: number; left: number } = { kind: 'none', delayMs: 0, left: Infinity }
let policyCounter = 0

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 10).toUpperCase()

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

const faultAnswer = (status: number, code: string, message: string) => ({ status, body: { fault: { code, message } } })

function fromJourney(body: { journey?: { from: string; to: string; departs: string; returns: string }; insured?: { age: number }[] }) {
  const j = body.journey!
  return {
    trip: { origin_country: j.from, destination_country: j.to, start_date: j.departs, end_date: j.returns },
    ages: body.insured!.map((insured) => insured.age).sort((a, b) => a - b),
  }
}

function quote(body: any) {
  const { trip, ages } = fromJourney(body)
  const currency: string = body.currency
  return {
    status: 200,
    body: {
      quotes: priceCatalogue(catalogue, trip, ages, currency).map(({ product, premiumMinor }) => {
        const code = CODE_OF[product]!
        const quoteRef = `ACMQ-${digest(`${code}|${JSON.stringify(trip)}|${ages}|${currency}`)}`
        quotes.set(quoteRef, { trip, ages, product, currency })
        const definition = catalogue.plans.find((plan) => plan.product === product)!
        return {
          quote_ref: quoteRef,
          product_code: code,
          product_label: LABEL_OF[code],
          tier_code: TIER_OF[definition.tier],
          cover_code: 'ST',
          currency,
          sum_insured_minor: toMinorUnits(catalogue, definition.sum_insured_inr * 100, currency),
          premium_minor: premiumMinor,
          benefit_codes: BENEFIT_CODES,
        }
      }),
    },
  }
}

function bind(body: any) {
  const found = quotes.get(body.quote_ref)
  if (!found) return faultAnswer(404, 'QUOTE_NOT_FOUND', 'Acme quote reference unknown or expired')
  const policyNumber = `ACME-UAT-${String(++policyCounter).padStart(6, '0')}`
  const premium = priceCatalogue(catalogue, found.trip, found.ages, found.currency).find((plan) => plan.product === found.product)!.premiumMinor
  policies.set(policyNumber, { ...found, premium, cancelled: false })
  stats.bound++
  return { status: 201, body: { policy_number: policyNumber, status: 'BOUND', currency: found.currency, premium_minor: premium } }
}

function endorse(policyNumber: string, body: any) {
  const policy = policies.get(policyNumber)
  if (!policy) return faultAnswer(404, 'POLICY_NOT_FOUND', 'Acme policy number unknown')
  const trip = { ...policy.trip }
  if (body.change === 'END_DATE') trip.end_date = body.value
  else if (body.change === 'DESTINATION') trip.destination_country = body.value
  else if (body.change !== 'REFERENCE') return faultAnswer(400, 'BAD_CHANGE', 'Acme endorsement type unknown')
  const definition = catalogue.plans.find((plan) => plan.product === policy.product)!
  const paise = premiumInPaise(catalogue, definition, trip, policy.ages)
  if (paise === null) return faultAnswer(422, 'NOT_COVERED', 'Acme product does not cover this journey')
  if (policy.cancelled) return faultAnswer(409, 'POLICY_CANCELLED', 'Acme policy is cancelled')
  const premium = toMinorUnits(catalogue, paise, policy.currency)
  if (body.dry_run) return { status: 200, body: { premium_minor: premium } }
  policy.trip = trip
  policy.premium = premium
  stats.endorsements++
  return { status: 201, body: { endorsement_no: `ACME-END-${stats.endorsements}`, premium_minor: policy.premium } }
}

/** Refunds as the sandbox's rules do, so both modes answer the same figures. */
function cancel(policyNumber: string, body: any) {
  const policy = policies.get(policyNumber)
  if (!policy) return faultAnswer(404, 'POLICY_NOT_FOUND', 'Acme policy number unknown')
  if (policy.cancelled) return faultAnswer(409, 'POLICY_CANCELLED', 'Acme policy is cancelled')
  const refund = refundOf(policy.trip, policy.premium, todayDayNumber(Date.now())).refundMinor
  if (body.dry_run) return { status: 200, body: { refund_minor: refund } }
  policy.cancelled = true
  stats.cancellations++
  return { status: 201, body: { cancellation_no: `ACME-CAN-${stats.cancellations}`, refund_minor: refund } }
}

/** Answers a protocol call, remembering answers per Idempotency-Key so a retry binds nothing twice. */
function protocol(path: string, key: string | undefined, body: any) {
  const endorsement = /^\/v1\/policies\/([^/]+)\/endorsements$/.exec(path)
  const cancellation = /^\/v1\/policies\/([^/]+)\/cancellations$/.exec(path)
  const known = key && path !== '/v1/quotes' ? answered.get(`${path}|${key}`) : undefined
  if (known) return known
  const answer =
    path === '/v1/quotes'
      ? quote(body)
      : path === '/v1/policies'
        ? bind(body)
        : endorsement
          ? endorse(decodeURIComponent(endorsement[1]!), body)
          : cancellation
            ? cancel(decodeURIComponent(cancellation[1]!), body)
            : faultAnswer(404, 'NO_SUCH_OPERATION', 'Acme UAT has no such operation')
  if (key && answer.status < 500) answered.set(`${path}|${key}`, answer)
  return answer
}

/** What a misbehaving insurer answers instead; the call is still processed for `slow`. */
function leaky(answer: { status: number; body: any }) {
  if (answer.body?.quotes) {
    return { status: 200, body: { quotes: answer.body.quotes.map((q: any) => ({ ...q, product_code: q.product_label })) } }
  }
  return { status: 200, body: { ...answer.body, currency: 'Acme Dollars', policy_number: answer.body?.policy_number } }
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = ''
  for await (const chunk of req) text += chunk
  return text
}

const server = createServer(async (req, res) => {
  const path = req.url ?? '/'
  const text = await readBody(req)
  if (path === '/__control' && req.method === 'POST') {
    const control = JSON.parse(text || '{}')
    fault = { kind: control.fault ?? 'none', delayMs: control.delay_ms ?? 5000, left: control.count ?? Infinity }
    return send(res, 200, { fault })
  }
  if (path === '/__stats') return send(res, 200, stats)
  if (path === '/__labels') {
    return send(res, 200, [
      ...Object.keys(LABEL_OF),
      ...Object.values(LABEL_OF),
      ...Object.values(TIER_OF),
      ...BENEFIT_CODES,
      'ACMQ-',
      'ACME-UAT-',
      'ACME-END-',
      'ACME-CAN-',
      'Acme',
    ])
  }
  stats.calls++
  stats.pending++
  try {
    await answer(req, res, text)
  } finally {
    stats.pending-- // also when the caller gave up waiting: the call is done only once answered here
  }
})

async function answer(req: IncomingMessage, res: ServerResponse, text: string) {
  const active = fault.kind !== 'none' && fault.left > 0 ? fault.kind : 'none'
  if (active !== 'none') fault.left--
  if (active === 'reset') return req.socket.destroy()
  if (active === 'error') return send(res, 503, { fault: { code: 'ACME_MAINTENANCE', message: 'Acme UAT is down for maintenance' } })
  if (active === 'malformed') return send(res, 200, '{"quotes": [{"quote_ref": "ACMQ-')
  if (active === 'decline') return send(res, 422, { fault: { code: 'DECLINED', message: 'Acme underwriting declined this risk' } })
  if (active === 'slow') await new Promise((resolve) => setTimeout(resolve, fault.delayMs))
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return send(res, 400, { fault: { code: 'BAD_JSON', message: 'Acme UAT could not read the request' } })
  }
  const result = protocol(req.url ?? '/', req.headers['idempotency-key'] as string | undefined, body)
  const final = active === 'leak' ? leaky(result) : result
  send(res, final.status, final.body)
}

const port = Number(process.env.PORT ?? 4400)
server.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'insurer UAT stand-in listening', url: `http://127.0.0.1:${port}` })))
process.on('SIGTERM', () => server.close(() => process.exit(0)))
