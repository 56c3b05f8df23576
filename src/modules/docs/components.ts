/**
 * @module The shapes the document repeats, named once under `components` and referred to by `$ref`:
 * a generator then writes a `Plan` and a `Policy` type rather than one anonymous copy per place, and
 * the document is a fraction of its size. The generator of the routes (`@elysiajs/openapi`) writes
 * every schema out where it is used; this finds each named model among them by its shape.
 */
import { t, type TSchema } from 'elysia'
import { unwrapSchema } from '@elysiajs/openapi/openapi'
import { ClockModel, FailureModel, MetaModel, ModeModel } from '../../http/envelope-model'
import { EventBody, EventsBody, EventsData, ListedEvent, ResendData, WebhookBody, WebhookData } from '../events/model'
import { PlanModel, SearchBody, SearchData } from '../plans/model'
import {
  CancelBody,
  CancelData,
  EndorsementModel,
  IssueBody,
  ModifyBody,
  ModifyData,
  PolicyData,
  PolicyEventData,
  ReadData,
  PoliciesBody,
  PoliciesData,
  RefundModel,
} from '../policies/model'
import { CallModel, RequestLogBody, RequestLogData } from '../request-log/model'
import { SessionBody, SessionData } from '../session/model'
import { AdvanceBody, RecordedEvents } from '../test-helpers/model'
import { TravellerModel, TripModel } from '../trip/model'

/** The named shapes; where one holds another, the holder comes first (it is matched whole). */
const NAMED: Record<string, TSchema> = {
  SessionRequest: SessionBody,
  Session: SessionData,
  SearchRequest: SearchBody,
  PlanSearch: SearchData,
  IssueRequest: IssueBody,
  ModifyRequest: ModifyBody,
  CancelRequest: CancelBody,
  Policy: ReadData,
  IssuedPolicy: PolicyData,
  PolicyChange: ModifyData,
  Cancellation: CancelData,
  EventList: EventsData,
  ListedEvent,
  Event: EventBody,
  EventData: EventBody.properties.data,
  PolicyEventData,
  PolicyEventDataV1: EventBody.properties.data.anyOf[2]!,
  EventsRequest: EventsBody,
  WebhookRequest: WebhookBody,
  Webhook: WebhookData,
  Resend: ResendData,
  PolicyListRequest: PoliciesBody,
  PolicyList: PoliciesData,
  ListedPolicy: PoliciesData.properties.policies.items,
  RequestLogQuery: RequestLogBody,
  RequestLog: RequestLogData,
  LoggedCall: CallModel,
  AdvanceRequest: AdvanceBody,
  // As the advance's route writes its answer (test-helpers/index.ts): the clock it set and what it recorded.
  Advance: t.Object({ ...ClockModel.properties, ...RecordedEvents }),
  Clock: ClockModel,
  Plan: PlanModel,
  Endorsement: EndorsementModel,
  Refund: RefundModel,
  Coverage: PolicyData.properties.coverage,
  CancelledBy: CancelData.properties.cancelled_by,
  Trip: TripModel,
  Traveller: TravellerModel,
  Meta: MetaModel,
  Mode: ModeModel,
  // With every code: each status's answer lists only its own (a client narrows by status), and an
  // operation's `default` answer is this one.
  ErrorEnvelope: FailureModel,
  Error: FailureModel.properties.error,
  ErrorDetail: FailureModel.properties.error.properties.details.items,
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

/** The JSON text of a value with its keys sorted: two schemas are one shape when these are equal. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner) =>
    inner && typeof inner === 'object' && !Array.isArray(inner) ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : 1))) : inner,
  )
}

/**
 * Replaces every copy of a named shape within `node` with its `$ref`; `skip` is the name of the
 * shape being written under `components`, which is not replaced by a reference to itself.
 */
function refer(node: Json, names: Map<string, string>, skip?: string): Json {
  if (Array.isArray(node)) return node.map((item) => refer(item, names, skip))
  if (!node || typeof node !== 'object') return node
  const name = names.get(canonical(node))
  if (name && name !== skip) return { $ref: `#/components/schemas/${name}` }
  // Examples are values, not schemas: a value that looks like a schema stays as it is.
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, key === 'example' || key === 'examples' ? value : refer(value, names, skip)]))
}

type Answers = Record<string, { headers?: Record<string, Json> }>

/** Response headers by name: every answer carries the same few. */
function referHeaders(paths: Json, headers: Record<string, Json>): void {
  const operations = Object.values(paths as Record<string, Record<string, { responses?: Answers }>>).flatMap((path) => Object.values(path))
  for (const operation of operations) {
    for (const answer of Object.values(operation.responses ?? {})) {
      for (const [name, header] of Object.entries(answer.headers ?? {})) {
        const known = headers[name]
        if (known !== undefined && canonical(known) !== canonical(header)) continue
        headers[name] = header
        answer.headers![name] = { $ref: `#/components/headers/${name}` }
      }
    }
  }
}

/**
 * Request headers that every operation taking them describes word for word (`Sandbox-Delay-Ms`,
 * `Idempotency-Key`, a webhook's `Sandbox-Signature`), by name; `Sandbox-Outcome` lists each
 * operation's own failures, and stays with each.
 */
function referParameters(sections: Json[], parameters: Record<string, Json>): void {
  type Parameter = { in?: string; name?: string }
  const operations = sections.flatMap((paths) =>
    Object.values(paths as Record<string, Record<string, { parameters?: Json[] }>>).flatMap((path) => Object.values(path)),
  )
  const forms = new Map<string, Set<string>>()
  const uses = new Map<string, number>()
  for (const operation of operations) {
    for (const parameter of (operation.parameters ?? []) as Parameter[]) {
      if (parameter.in !== 'header' || !parameter.name) continue
      forms.set(parameter.name, (forms.get(parameter.name) ?? new Set()).add(canonical(parameter)))
      uses.set(parameter.name, (uses.get(parameter.name) ?? 0) + 1)
    }
  }
  for (const operation of operations) {
    operation.parameters = operation.parameters?.map((parameter) => {
      const { in: place, name } = parameter as Parameter
      if (place !== 'header' || !name || forms.get(name)!.size > 1 || uses.get(name)! < 2) return parameter
      parameters[name] = parameter
      return { $ref: `#/components/parameters/${name}` }
    })
  }
}

/** `rate_limited` → `RateLimited`; several codes are joined by `Or`. */
const answerName = (codes: string[]) => codes.map((code) => code.replace(/(?:^|_)(\w)/g, (_match, letter: string) => letter.toUpperCase())).join('Or')

/**
 * Error answers that several operations give word for word (most of those every route can give),
 * written once under `components.responses`.
 */
function referAnswers(paths: Json, answers: Record<string, Json>): void {
  const operations = Object.values(paths as Record<string, Record<string, { responses?: Record<string, Json> }>>).flatMap((path) => Object.values(path))
  const uses = new Map<string, number>()
  for (const operation of operations)
    for (const answer of Object.values(operation.responses ?? {})) uses.set(canonical(answer), (uses.get(canonical(answer)) ?? 0) + 1)
  for (const operation of operations) {
    for (const [status, answer] of Object.entries(operation.responses ?? {})) {
      const codes = /^Error codes: (.*)\.$/.exec((answer as { description?: string }).description ?? '')?.[1]?.match(/[a-z_]+/g)
      if (!codes || uses.get(canonical(answer))! < 2) continue
      const known = answers[answerName(codes)]
      // Two answers with the same codes but other words would share a name: keep the second inline.
      if (known !== undefined && canonical(known) !== canonical(answer)) continue
      answers[answerName(codes)] = answer
      operation.responses![status] = { $ref: `#/components/responses/${answerName(codes)}` }
    }
  }
}

/** `paths` and `webhooks` with the named shapes as references, and the `components` that hold them. */
export function withComponents<Paths extends Json, Webhooks extends Json>(paths: Paths, webhooks: Webhooks) {
  // As the generator writes them (its enums and nullable types), so that a copy is found by its text.
  const plain = Object.entries(NAMED).map(([name, schema]) => [name, JSON.parse(JSON.stringify(unwrapSchema(schema))) as Json] as const)
  const names = new Map(plain.map(([name, schema]) => [canonical(schema), name]))
  const schemas = Object.fromEntries(plain.map(([name, schema]) => [name, refer(schema, names, name)]))
  const headers: Record<string, Json> = {}
  const referred = { paths: refer(paths, names), webhooks: refer(webhooks, names) }
  referHeaders(referred.paths, headers)
  const responses: Record<string, Json> = {}
  referAnswers(referred.paths, responses)
  const parameters: Record<string, Json> = {}
  referParameters([referred.paths, referred.webhooks], parameters)
  return { ...referred, components: { schemas, parameters, responses, headers } }
}
