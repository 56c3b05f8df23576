/**
 * Every bound the served OpenAPI document states on a request header or body field is the server's:
 * the value on the bound is accepted and the value just past it refused, naming the field. The
 * probes are made from the document itself (any local `$ref` followed, operations known by path and
 * method), so a new bounded field is probed with no change here, and a bound the server does not
 * enforce, or enforces more tightly, fails. What the server decides beyond a schema is listed here
 * explicitly: the contract's limits that answer their own codes (180 days, 6 travellers), and the
 * fields whose pattern is a form that a domain rule narrows (real dates, assigned countries).
 *
 * Each probe runs in a session of its own: the document's example requests in the document's order
 * (its flow: session, search, issue, modify…) up to the operation probed, then the probed request.
 */
import { describe, expect, test } from 'bun:test'
import { childPath } from '../../src/errors'
import { loadCatalogue } from '../../src/modules/plans/catalogue'
import { inProcessApp } from './support/app'
import { resolved, servedDocument, type Json } from './support/openapi'

type Schema = { [key: string]: any }
type Path = (string | number)[]

// ---------------------------------------------------------------------------------------------
// The document's operations and examples

interface Operation {
  /** `POST /api/sandbox/policy/new`: operationIds may change, path and method do not. */
  key: string
  method: string
  path: string
  parameters: Schema[]
  body: Schema | undefined
  /** The example request bodies, the flow's first. */
  examples: Json[]
  /** The example of its success, where later calls find what they carry (a `plan_id`). */
  answer: Json | undefined
}

/** The operations that have an example request, in the document's order: the flow. */
function operationsOf(document: any): Operation[] {
  const operations: Operation[] = []
  for (const [path, item] of Object.entries<any>(resolved(document, document.paths))) {
    for (const [method, raw] of Object.entries<any>(resolved(document, item))) {
      if (!['get', 'put', 'post', 'delete', 'patch'].includes(method)) continue
      const operation = resolved(document, raw)
      const json = resolved(document, resolved(document, operation.requestBody)?.content?.['application/json'])
      if (!json) continue
      const examples =
        json.example !== undefined ? [json.example] : Object.values<Json>(json.examples ?? {}).map((example) => resolved(document, example).value)
      if (examples.length === 0) continue
      const success = resolved(document, resolved(document, operation.responses?.['200'])?.content?.['application/json'])
      operations.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        parameters: [...(item.parameters ?? []), ...(operation.parameters ?? [])].map((parameter: Json) => resolved(document, parameter)),
        body: json.schema && resolved(document, json.schema),
        examples,
        answer: success?.example ?? (success?.examples && resolved(document, Object.values<Json>(success.examples)[0]!).value),
      })
    }
  }
  return operations
}

// ---------------------------------------------------------------------------------------------
// Fields with bounds

const BOUNDS = [
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
  'enum',
  'const',
] as const

interface Field {
  operation: Operation
  in: 'header' | 'body'
  /** As `error.details[].field` names it: the header's name, or the body's JSON path (`travellers[0].age`). */
  name: string
  pointer: Path
  schema: Schema
  /** The request body the field is probed in: the first example of the shape that holds it. */
  body: Json
}

const typeOf = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value)

/** Whether `value` has the shape of `schema` as far as picking a union's member needs: types, constants, required fields. */
function fits(document: Json, node: Json, value: any): boolean {
  const schema = resolved(document, node)
  if ('const' in schema && schema.const !== value) return false
  if (schema.enum && !schema.enum.includes(value)) return false
  const types: string[] = schema.type === undefined ? [] : [schema.type].flat()
  if (types.length > 0 && !types.some((type) => type === typeOf(value) || (type === 'number' && typeOf(value) === 'integer'))) return false
  if (typeOf(value) === 'object') {
    if ((schema.required ?? []).some((name: string) => !(name in value))) return false
    if (schema.additionalProperties === false && Object.keys(value).some((name) => !(name in (schema.properties ?? {})))) return false
    if (Object.entries<Json>(schema.properties ?? {}).some(([name, inner]) => name in value && !fits(document, inner, value[name]))) return false
  }
  if ((schema.allOf ?? []).some((member: Json) => !fits(document, member, value))) return false
  const members = schema.anyOf ?? schema.oneOf
  return !members || members.some((member: Json) => fits(document, member, value))
}

const valueAt = (value: any, pointer: Path) => pointer.reduce((node, key) => node?.[key], value)

/** Every schema within a body schema, with where it sits and the union members on the way to it. */
function* shapes(
  document: Json,
  node: Json,
  pointer: Path = [],
  members: { pointer: Path; member: Json }[] = [],
): Generator<{ schema: Schema; pointer: Path; members: { pointer: Path; member: Json }[] }> {
  if (pointer.length > 16) throw new Error(`body schema deeper than 16 levels at ${pointer.join('/')}`)
  const schema = resolved(document, node)
  yield { schema, pointer, members }
  for (const member of schema.allOf ?? []) yield* shapes(document, member, pointer, members)
  for (const member of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) yield* shapes(document, member, pointer, [...members, { pointer, member }])
  for (const [name, inner] of Object.entries<Json>(schema.properties ?? {})) yield* shapes(document, inner, [...pointer, name], members)
  if (schema.items && typeof schema.items === 'object') yield* shapes(document, schema.items, [...pointer, 0], members)
}

const bounded = (schema: Schema) => BOUNDS.some((bound) => bound in schema)
const pathName = (pointer: Path) => pointer.reduce<string>((parent, key) => childPath(parent, key), '') || '$'

/**
 * The bounded request headers and body fields of every operation, and the fields a domain bound
 * names. Path parameters are left out on purpose: a malformed reference answers the same 404 as an
 * unknown one (contract), so no bound on one is observable.
 */
function fieldsOf(document: Json, operations: Operation[]): { fields: Field[]; problems: string[] } {
  const fields: Field[] = []
  const problems: string[] = []
  for (const operation of operations) {
    for (const parameter of operation.parameters) {
      const schema = resolved(document, parameter.schema ?? {})
      if (parameter.in === 'header' && bounded(schema))
        fields.push({ operation, in: 'header', name: parameter.name, pointer: [], schema, body: operation.examples[0]! })
    }
    if (!operation.body) continue
    for (const { schema, pointer, members } of shapes(document, operation.body)) {
      const name = pathName(pointer)
      if (!bounded(schema) && !DOMAIN_BOUNDS.some((bound) => bound.field === name)) continue
      // The example of the union members on the way: modify's `destination_country` is probed in its own scenario's.
      const body = operation.examples.find((example) =>
        members.every(({ pointer: at, member }) => valueAt(example, at) === undefined || fits(document, member, valueAt(example, at))),
      )
      if (body === undefined) problems.push(`${operation.key}: no example request has the shape that holds ${name}`)
      else fields.push({ operation, in: 'body', name, pointer, schema, body })
    }
  }
  return { fields, problems }
}

// ---------------------------------------------------------------------------------------------
// Patterns: the values on their edges, and just past them

/** A class of characters (a literal is a class of one) repeated min to max times. */
interface Atom {
  ranges: [number, number][]
  min: number
  max: number
}

/**
 * The alternatives of a pattern of the forms the document uses: `^…$` or `^(?:…|…)$`, each a run of
 * literals, escapes and classes, each repeated `{n}`, `{m,n}`, `{m,}`, `?`, `+` or `*`. Anything
 * else throws, so that a pattern this cannot probe fails rather than passes untested.
 */
function alternatives(pattern: string): Atom[][] {
  const fail = (why: string): never => {
    throw new Error(`pattern ${pattern}: ${why}; teach schema-bounds.test.ts to probe it`)
  }
  if (!pattern.startsWith('^') || !pattern.endsWith('$') || pattern.endsWith('\\$')) fail('not anchored at both ends')
  let body = pattern.slice(1, -1)
  const grouped = body.startsWith('(?:') && body.endsWith(')') && body.indexOf(')') === body.length - 1
  if (grouped) body = body.slice(3, -1)
  // `^a|b$` is `^a` or `b$`: each alternative anchored at one end only.
  else if (body.includes('|')) fail('an alternation outside (?:…)')
  const result: Atom[][] = [[]]
  const code = (char: string) => char.codePointAt(0)!
  const ESCAPES: Record<string, [number, number][]> = { d: [[48, 57]] }
  for (let at = 0; at < body.length; ) {
    const char = body[at]!
    let ranges: [number, number][]
    if (char === '|') {
      result.push([])
      at++
      continue
    } else if (char === '[') {
      const end = body.indexOf(']', at + 2)
      if (end < 0 || body[at + 1] === '^') fail('a negated or unclosed class')
      const inside = [...body.slice(at + 1, end)]
      ranges = []
      for (let index = 0; index < inside.length; index++) {
        if (inside[index] === '\\') fail('an escape inside a class')
        if (inside[index + 1] === '-' && index + 2 < inside.length) {
          ranges.push([code(inside[index]!), code(inside[index + 2]!)])
          index += 2
        } else ranges.push([code(inside[index]!), code(inside[index]!)])
      }
      at = end + 1
    } else if (char === '\\') {
      const escaped = body[at + 1] ?? fail('a trailing backslash')
      ranges = ESCAPES[escaped] ?? (/[A-Za-z0-9]/.test(escaped) ? fail(`the escape \\${escaped}`) : [[code(escaped), code(escaped)]])
      at += 2
    } else if ('()^$.*+?{}'.includes(char)) {
      return fail(`"${char}" where a character or class belongs`)
    } else {
      ranges = [[code(char), code(char)]]
      at++
    }
    let [min, max] = [1, 1]
    const quantifier = /^(?:\{(\d+)(,(\d*))?\}|[?+*])/.exec(body.slice(at))
    if (quantifier) {
      const [text, low, comma, high] = quantifier
      ;[min, max] =
        text === '?'
          ? [0, 1]
          : text === '+'
            ? [1, Infinity]
            : text === '*'
              ? [0, Infinity]
              : [Number(low), comma === undefined ? Number(low) : high === '' ? Infinity : Number(high)]
      at += text.length
    }
    result.at(-1)!.push({ ranges, min, max })
  }
  return result
}

const charOf = (code: number) => String.fromCodePoint(code)
const inClass = (atom: Atom, code: number) => atom.ranges.some(([low, high]) => code >= low && code <= high)
const classSource = (atom: Atom) => `[${atom.ranges.map(([low, high]) => `\\u{${low.toString(16)}}-\\u{${high.toString(16)}}`).join('')}]`

/**
 * The pattern's edges and the values just past them, each made from one instance of an alternative
 * (`base` when it is one, else the alternative's first characters, three of each where they may
 * repeat) by changing one atom: edges are each end of each range of its class, at its fewest and
 * most repetitions; past are one repetition fewer or more, and the characters next to each end of
 * each range that the class leaves out. A value past one atom that another alternative admits is not
 * past (`00000` for `[0-9]{1,4}` when `0[0-9]{4}` is another alternative).
 */
function patternProbes(pattern: string, base: unknown): { edges: string[]; past: string[] } {
  const whole = new RegExp(pattern, 'u')
  const edges = new Set<string>()
  const past = new Set<string>()
  for (const atoms of alternatives(pattern)) {
    const spans = new RegExp(`^${atoms.map((atom) => `(${classSource(atom)}{${atom.min},${atom.max === Infinity ? '' : atom.max}})`).join('')}$`, 'du')
    const instance =
      typeof base === 'string' && spans.test(base)
        ? base
        : atoms.map((atom) => charOf(atom.ranges[0]![0]).repeat(Math.min(atom.max, Math.max(atom.min, 3)))).join('')
    const indices = spans.exec(instance)!.indices!
    atoms.forEach((atom, index) => {
      const [start, end] = indices[index + 1]!
      const chars = [...instance.slice(start, end)]
      const replaced = (part: string) => instance.slice(0, start) + part + instance.slice(end)
      const counts = [atom.min, atom.max === Infinity ? Math.max(atom.min, chars.length) : atom.max]
      for (const [low, high] of atom.ranges) for (const end of [low, high]) for (const count of counts) edges.add(replaced(charOf(end).repeat(count)))
      const last = chars.at(-1) ?? charOf(atom.ranges[0]![0])
      if (atom.min > 0) past.add(replaced(chars.slice(0, atom.min - 1).join('') + last.repeat(Math.max(0, atom.min - 1 - chars.length))))
      if (atom.max !== Infinity) past.add(replaced(chars.join('') + last.repeat(atom.max + 1 - chars.length)))
      if (chars.length === 0) return
      const middle = Math.floor(chars.length / 2)
      for (const [low, high] of atom.ranges) {
        for (const outside of [low - 1, high + 1]) {
          if (outside < 0 || outside > 0x10ffff || inClass(atom, outside)) continue
          past.add(replaced([...chars.slice(0, middle), charOf(outside), ...chars.slice(middle + 1)].join('')))
        }
      }
    })
  }
  return { edges: [...edges], past: [...past].filter((value) => !whole.test(value)) }
}

// ---------------------------------------------------------------------------------------------
// What the server decides beyond a schema: stated here explicitly

/**
 * Fields whose pattern is a form that a domain rule narrows (contract, "Trip, travellers,
 * currency"): an edge of the pattern passes it, and the domain may then refuse it with one of these
 * codes, naming the field with an issue of its own (never the schema's `x-issue`).
 */
const NARROWED: Record<string, { codes: string[]; why: string; named?: string }> = {
  'trip.start_date': { codes: ['validation_failed'], why: 'a real date, from today to 365 days ahead' },
  'trip.end_date': { codes: ['validation_failed', 'trip_too_long'], why: 'a real date, not before start_date, at most 180 days after it' },
  'trip.origin_country': { codes: ['validation_failed'], why: 'an assigned country code' },
  'trip.destination_country': { codes: ['validation_failed'], why: 'an assigned country code' },
  // An extension's trip_too_long names the policy's trip.end_date (test/http/validation.spec.ts).
  new_end_date: { codes: ['validation_failed', 'scenario_not_applicable', 'trip_too_long'], why: 'a real date that fits the scenario', named: 'trip.end_date' },
  destination_country: { codes: ['validation_failed', 'scenario_not_applicable'], why: "another assigned country, inside the plan's cover" },
  currency: { codes: ['unsupported_currency'], why: 'a currency of the catalogue' },
  after: { codes: ['validation_failed'], why: 'the id of an event of this session' },
}

/**
 * Values on a bound that pass it and that the operation then answers otherwise than 200, for a
 * reason of its own (the bound's field is not the problem).
 */
const ANSWERED_OTHERWISE: { operation: string; field: string; matches: (value: any) => boolean; code: string; why: string }[] = [
  {
    operation: 'POST /api/sandbox/policy/new',
    field: 'plan_id',
    matches: () => true,
    code: 'plan_not_found',
    why: 'no search returned a plan_id of that length',
  },
  {
    operation: 'POST /api/sandbox/policy/new',
    field: 'expected_premium',
    matches: (value) => value === 0,
    code: 'price_changed',
    why: 'the premium at bind is not 0',
  },
  {
    operation: 'POST /api/sandbox/policy/new',
    field: 'travellers[0].age',
    matches: (age) => age > OLDEST_COVERED,
    code: 'plan_not_found',
    why: 'no plan covers that age, so the search before it returned no plan_id to issue',
  },
]

/** The oldest age any plan of the catalogue covers. */
const OLDEST_COVERED = Math.max(...loadCatalogue().plans.map((plan) => plan.max_age))

/** Codes a bound answers instead of `validation_failed`, by field and keyword. */
const REFUSED_WITH: Record<string, string> = { 'travellers maxItems': 'too_many_travellers' }

/** What a value of a header's enum answers when accepted: the forced failure it names. */
const HEADER_VALUE_ANSWERS: Record<string, (value: string) => string | null> = {
  // Every value is a failure the call then answers, but document_pending, which issues the policy with its certificate pending.
  'Sandbox-Outcome': (value) => (value === 'document_pending' ? null : value),
}

const day = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

/**
 * The contract's limits that no schema keyword states, each answering its own code (contract: "Trip,
 * travellers, currency", "Policies"); probed wherever the document has their field.
 */
const DOMAIN_BOUNDS: {
  field: string
  code: string
  /** The field `error.details` names. */
  detail: string
  /** How the field's description states the limit, where the document says it in words only. */
  stated?: RegExp
  when?: (body: any) => boolean
  probes: (value: any, earlier: (pointer: Path) => any) => { on: Json; past: Json }
}[] = [
  {
    field: 'travellers',
    code: 'too_many_travellers',
    detail: 'travellers',
    stated: /\b1 to 6\b/,
    probes: (travellers) => ({ on: resize(travellers, 6), past: resize(travellers, 7) }),
  },
  {
    field: 'trip',
    code: 'trip_too_long',
    detail: 'trip.end_date',
    stated: /\b180 days after\b/,
    probes: (trip) => ({ on: { ...trip, end_date: day(trip.start_date, 180) }, past: { ...trip, end_date: day(trip.start_date, 181) } }),
  },
  {
    // An extension past 180 days from the policy's start; the refusal names the policy's trip.end_date (test/http/validation.spec.ts).
    field: 'new_end_date',
    code: 'trip_too_long',
    detail: 'trip.end_date',
    when: (body) => body.scenario === 'extend_end_date',
    probes: (_date, earlier) => ({ on: day(earlier(['trip', 'start_date']), 180), past: day(earlier(['trip', 'start_date']), 181) }),
  },
]

// ---------------------------------------------------------------------------------------------
// Probes

interface Probe {
  field: Field
  /** The keyword probed, or the domain rule's code. */
  bound: string
  value: Json
  /** On the bound (false) or just past it (true). */
  past: boolean
  /** The code a refusal answers (past), or the answer expected on the bound (null: 200). */
  code: string | null
  /** The fields a refusal may name in `error.details`. */
  named: string[]
  /** On an edge of a narrowed pattern: the domain may refuse it too. */
  narrowed?: { codes: string[] }
}

/** `value` made `length` long: cut, or its last element (character or item) repeated. */
function resize<T extends string | Json[]>(value: T, length: number): T {
  if (typeof value === 'string') return (value.length >= length ? value.slice(0, length) : value + (value.at(-1) ?? 'a').repeat(length - value.length)) as T
  const last = value.at(-1) ?? null
  return (value.length >= length ? value.slice(0, length) : [...value, ...Array.from({ length: length - value.length }, () => structuredClone(last))]) as T
}

/** The next representable number from `value` upwards or downwards: just past a bound that is not a whole number. */
function nextNumber(value: number, up: boolean): number {
  if (value === 0) return up ? Number.MIN_VALUE : -Number.MIN_VALUE
  const bits = new Float64Array([value])
  new BigInt64Array(bits.buffer)[0]! += value > 0 === up ? 1n : -1n
  return bits[0]!
}

/** A header's value as the request carries it, or null when HTTP cannot carry it (fetch drops or trims some characters). */
function carriable(value: string): string | null {
  try {
    return new Headers({ probe: value }).get('probe') === value ? value : null
  } catch {
    return null
  }
}

/** The values every operation gives a header's enum, to probe each operation with the others' (a code it cannot answer). */
function headerValues(fields: Field[]): Map<string, Set<Json>> {
  const values = new Map<string, Set<Json>>()
  for (const field of fields)
    if (field.in === 'header' && field.schema.enum) values.set(field.name, new Set([...(values.get(field.name) ?? []), ...field.schema.enum]))
  return values
}

function probesOf(field: Field, elsewhere: Map<string, Set<Json>>, earlier: (pointer: Path) => any): Probe[] {
  const { schema } = field
  const probes: Probe[] = []
  const base = field.in === 'header' ? (schema.example ?? schema.enum?.[0] ?? schema.const) : valueAt(field.body, field.pointer)
  const refusal = (keyword: string) => REFUSED_WITH[`${field.name} ${keyword}`] ?? 'validation_failed'
  const add = (bound: string, value: Json, past: boolean, extra: Partial<Probe> = {}) => {
    if (field.in === 'header' && (typeof value !== 'string' || carriable(value) === null)) return
    const otherwise = ANSWERED_OTHERWISE.find((entry) => entry.operation === field.operation.key && entry.field === field.name && entry.matches(value))
    probes.push({ field, bound, value, past, code: past ? refusal(bound) : (otherwise?.code ?? null), named: [field.name], ...extra })
  }
  // Headers are text: a number's bound is probed in its digits.
  const number = (value: number): Json => (field.in === 'header' ? String(value) : value)
  const integer = [schema.type].flat().includes('integer')
  const step = (value: number, up: boolean) => (integer ? value + (up ? 1 : -1) : nextNumber(value, up))
  if (typeof schema.minimum === 'number') add('minimum', number(schema.minimum), false), add('minimum', number(step(schema.minimum, false)), true)
  if (typeof schema.maximum === 'number') add('maximum', number(schema.maximum), false), add('maximum', number(step(schema.maximum, true)), true)
  if (typeof schema.exclusiveMinimum === 'number')
    add('exclusiveMinimum', number(step(schema.exclusiveMinimum, true)), false), add('exclusiveMinimum', number(schema.exclusiveMinimum), true)
  if (typeof schema.exclusiveMaximum === 'number')
    add('exclusiveMaximum', number(step(schema.exclusiveMaximum, false)), false), add('exclusiveMaximum', number(schema.exclusiveMaximum), true)
  const text = typeof base === 'string' ? base : schema.pattern ? patternProbes(schema.pattern, undefined).edges[0]! : 'a'
  if (typeof schema.minLength === 'number') {
    add('minLength', resize(text, schema.minLength), false)
    if (schema.minLength > 0) add('minLength', resize(text, schema.minLength - 1), true)
  }
  if (typeof schema.maxLength === 'number') add('maxLength', resize(text, schema.maxLength), false), add('maxLength', resize(text, schema.maxLength + 1), true)
  const list = Array.isArray(base) ? base : []
  if (typeof schema.minItems === 'number') {
    add('minItems', resize(list, schema.minItems), false)
    if (schema.minItems > 0) add('minItems', resize(list, schema.minItems - 1), true)
  }
  if (typeof schema.maxItems === 'number') add('maxItems', resize(list, schema.maxItems), false), add('maxItems', resize(list, schema.maxItems + 1), true)
  if (typeof schema.pattern === 'string') {
    const { edges, past } = patternProbes(schema.pattern, base)
    const narrowed = field.in === 'body' ? NARROWED[field.name] : undefined
    for (const edge of edges) add('pattern', edge, false, narrowed && { narrowed, named: [field.name, ...(narrowed.named ? [narrowed.named] : [])] })
    for (const value of past) add('pattern', value, true)
  }
  const allowed: Json[] | undefined = schema.enum ?? ('const' in schema ? [schema.const] : undefined)
  if (allowed) {
    const keyword = schema.enum ? 'enum' : 'const'
    const answers = HEADER_VALUE_ANSWERS[field.name]
    for (const value of allowed) {
      if (field.in === 'header' && answers && typeof value === 'string')
        probes.push({ field, bound: keyword, value, past: false, code: answers(value), named: [] })
      else add(keyword, value, false)
    }
    // Near misses: another case, and the values this header takes on other operations.
    const near = allowed.flatMap((value) => (typeof value === 'string' ? [value.toUpperCase(), value.toLowerCase()] : []))
    for (const value of new Set([...near, ...(field.in === 'header' ? (elsewhere.get(field.name) ?? []) : [])]))
      if (!allowed.includes(value)) add(keyword, value, true)
  }
  for (const bound of DOMAIN_BOUNDS) {
    if (bound.field !== field.name || (bound.when && !bound.when(field.body))) continue
    const { on, past } = bound.probes(base, earlier)
    probes.push(
      { field, bound: bound.code, value: on, past: false, code: null, named: [] },
      { field, bound: bound.code, value: past, past: true, code: bound.code, named: [bound.detail] },
    )
  }
  return probes
}

// ---------------------------------------------------------------------------------------------
// Running a probe: the flow up to its operation, in a session of its own

interface Answer {
  status: number
  body: any
}

/** Where each path parameter's value comes from (the document's introduction says so in words). */
const PATH_VALUES: Record<string, (answers: Map<string, Answer>) => string> = {
  policy_ref: (answers) => answers.get('POST /api/sandbox/policy/new')?.body.data.policy_ref,
  event_id: (answers) => answers.get('POST /api/sandbox/events')?.body.data.events[0].id,
  request_id: (answers) => answers.get('POST /api/sandbox/requests')?.body.data.calls[0].request_id,
}

/** The string leaves of a value, with their pointers. */
function* leaves(value: Json, pointer: Path = []): Generator<[Path, string]> {
  if (typeof value === 'string') yield [pointer, value]
  else if (value && typeof value === 'object')
    for (const [key, inner] of Object.entries(value)) yield* leaves(inner, [...pointer, Array.isArray(value) ? Number(key) : key])
}

function setAt(value: Json, pointer: Path, replacement: Json): Json {
  if (pointer.length === 0) return replacement
  const copy: any = structuredClone(value ?? (typeof pointer[0] === 'number' ? [] : {}))
  copy[pointer[0]!] = setAt(copy[pointer[0]!], pointer.slice(1), replacement)
  return copy
}

/**
 * The request with each string that an earlier call's documented answer holds replaced by what
 * that call really answered there: the `plan_id` the search returned.
 */
function carried(request: Json, earlier: { operation: Operation; answer: Answer }[]): Json {
  let result = request
  for (const [pointer, text] of leaves(request)) {
    for (const { operation, answer } of earlier) {
      const found = [...leaves(operation.answer ?? null)].find(([, documented]) => documented === text)
      const actual = found && valueAt(answer.body, found[0])
      if (typeof actual === 'string') {
        result = setAt(result, pointer, actual)
        break
      }
    }
  }
  return result
}

async function runProbe(app: Awaited<ReturnType<typeof inProcessApp>>['app'], flow: Operation[], probe: Probe): Promise<Answer> {
  const { field } = probe
  let cookie: string | undefined
  const answers = new Map<string, Answer>()
  const earlier: { operation: Operation; answer: Answer }[] = []
  async function send(operation: Operation, body: Json, headers: Record<string, string>): Promise<Answer> {
    const path = operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = PATH_VALUES[name]?.(answers)
      if (value === undefined) throw new Error(`${operation.key}: no value for {${name}}; say in PATH_VALUES which answer holds it`)
      return encodeURIComponent(value)
    })
    // Aborted from the start: a Sandbox-Delay-Ms accepted is not waited for (http/delay.ts ends the wait when the client leaves).
    const signal = AbortSignal.abort()
    const response = await app.handle(
      new Request(`http://localhost${path}`, {
        method: operation.method,
        headers: { 'content-type': 'application/json', ...(cookie && { cookie: `sbx_session=${cookie}` }), ...headers },
        body: JSON.stringify(body),
        signal,
      }),
    )
    for (const line of response.headers.getSetCookie()) cookie = /^sbx_session=([^;]*)/.exec(line)?.[1] ?? cookie
    const json = response.headers.get('content-type')?.includes('application/json')
    const answer = { status: response.status, body: json ? await response.json() : (await response.arrayBuffer(), null) }
    // A call's last step (its request log entry) runs after its answer, on Elysia's setImmediate; a server's socket gives it
    // that turn of the event loop, in process nothing does: without it the log's example (the issue call) would not be listed.
    await new Promise((resolve) => setImmediate(resolve))
    return answer
  }
  // On the bound, the same value goes to the earlier calls that sent what the probed one sends (the search the issue names);
  // not a narrowed edge, which the earlier call may refuse as well.
  const sent = valueAt(field.body, field.pointer)
  const coupled = (body: Json) =>
    field.in === 'body' && !probe.past && !probe.narrowed && sent !== undefined && Bun.deepEquals(valueAt(body, field.pointer), sent)
      ? setAt(body, field.pointer, probe.value)
      : body
  for (const operation of flow.slice(0, flow.indexOf(field.operation))) {
    const answer = await send(operation, coupled(carried(operation.examples[0]!, earlier)), {})
    if (answer.status !== 200) throw new Error(`the flow stopped at ${operation.key}: ${answer.status} ${answer.body?.error?.code}`)
    answers.set(operation.key, answer)
    earlier.push({ operation, answer })
  }
  const body = carried(field.body, earlier)
  return field.in === 'header'
    ? send(field.operation, body, { [field.name]: probe.value as string })
    : send(field.operation, setAt(body, field.pointer, probe.value), {})
}

/** What is wrong with an answer to a probe, or null. */
function mismatch(probe: Probe, answer: Answer): string | null {
  const { field } = probe
  const error = answer.body?.error
  const names = (error?.details ?? []).some((detail: { field: string }) => probe.named.includes(detail.field))
  const got = `${answer.status} ${error?.code ?? ''} ${JSON.stringify(error?.details ?? '')}`
  const what = `${field.operation.key} ${field.in} ${field.name} ${probe.bound} ${probe.past ? 'past' : 'on'} ${JSON.stringify(probe.value).slice(0, 80)}`
  if (probe.past)
    return answer.status === 422 && error?.code === probe.code && names ? null : `${what}: refused with ${probe.code} naming the field expected, got ${got}`
  if (
    probe.narrowed &&
    answer.status === 422 &&
    probe.narrowed.codes.includes(error.code) &&
    names &&
    error.details.every((detail: { issue: string }) => detail.issue !== field.schema['x-issue'])
  )
    return null
  if (probe.code === null) return answer.status === 200 ? null : `${what}: accepted (200) expected, got ${got}`
  return error?.code === probe.code ? null : `${what}: ${probe.code} expected, got ${got}`
}

/** Runs `run` over `items`, `width` at a time. */
async function inParallel<T, R>(items: T[], width: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = []
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let index = next++; index < items.length; index = next++) results[index] = await run(items[index]!)
    }),
  )
  return results
}

// ---------------------------------------------------------------------------------------------

const sandbox = await inProcessApp({ SANDBOX_RATE_LIMIT: '1000000000', SANDBOX_WEBHOOK_TARGETS: 'any' })
const served = await servedDocument(sandbox)
const flow = operationsOf(served)
const { fields, problems } = fieldsOf(served, flow)
const elsewhere = headerValues(fields)

/** A value the flow's earlier requests sent at `pointer` (a policy's start date for its modify). */
const earlierValue = (operation: Operation) => (pointer: Path) =>
  flow
    .slice(0, flow.indexOf(operation))
    .map((earlier) => valueAt(earlier.examples[0], pointer))
    .find((value) => value !== undefined)

/** The document with every `$ref` replaced by what it names: the shape before `components`. */
function inlined(document: Json, node: Json = document, depth = 0): Json {
  if (depth > 64) throw new Error('$ref loop')
  if (Array.isArray(node)) return node.map((item) => inlined(document, item, depth + 1))
  if (!node || typeof node !== 'object') return node
  return Object.fromEntries(Object.entries(resolved(document, node)).map(([key, value]) => [key, inlined(document, value as Json, depth + 1)]))
}

describe('the probes', () => {
  test('come from the document on either shape: with `$ref`s into components, and with every one inlined', () => {
    const plain = inlined(served)
    const list = (document: Json) => fieldsOf(document, operationsOf(document)).fields.map((field) => `${field.operation.key} ${field.in} ${field.name}`)
    expect(list(plain)).toEqual(list(served))
    expect(JSON.stringify(plain)).not.toContain('"$ref"')
  })

  test("every operation of the flow has its headers probed, and the models' bounded fields are found", () => {
    expect(problems).toEqual([])
    // No operation with a request body is left out for want of an example.
    const withBodies = Object.entries<any>(resolved(served, (served as any).paths)).flatMap(([path, item]) =>
      Object.entries<any>(resolved(served, item))
        .filter(([, operation]) => resolved(served, operation).requestBody)
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    )
    expect(flow.map((operation) => operation.key)).toEqual(withBodies)
    expect(flow.length).toBeGreaterThan(0)
    for (const operation of flow) {
      const headers = fields.filter((field) => field.operation === operation && field.in === 'header').map((field) => field.name)
      expect(headers, operation.key).toEqual(expect.arrayContaining(['Sandbox-Outcome', 'Sandbox-Delay-Ms']))
    }
    const found = new Set(fields.map((field) => `${field.operation.key} ${field.name}`))
    for (const name of [
      'POST /api/sandbox/session lifetime_minutes',
      'POST /api/sandbox/plans/search travellers[0].age',
      'POST /api/sandbox/plans/search currency',
      'POST /api/sandbox/policy/new Idempotency-Key',
      'POST /api/sandbox/policy/new partner_reference',
      'POST /api/sandbox/policy/new expected_premium',
      'POST /api/sandbox/policy/{policy_ref}/modify destination_country',
      'POST /api/sandbox/webhook url',
      'POST /api/sandbox/events limit',
      'POST /api/sandbox/policies limit',
      'POST /api/sandbox/requests path',
      'POST /api/sandbox/requests limit',
    ])
      expect(found, name).toContain(name)
    // A limit no keyword can state is stated in words.
    for (const bound of DOMAIN_BOUNDS.filter((entry) => entry.stated)) {
      for (const field of fields.filter((candidate) => candidate.name === bound.field))
        expect(field.schema.description, `${field.operation.key} ${bound.field}`).toMatch(bound.stated!)
    }
    // Each explicit rule names a field the document has, so that a renamed field does not leave it silently unused.
    for (const name of [...Object.keys(NARROWED), ...DOMAIN_BOUNDS.map((bound) => bound.field), ...ANSWERED_OTHERWISE.map((entry) => entry.field)]) {
      expect(
        fields.some((field) => field.name === name),
        name,
      ).toBe(true)
    }
  })

  test("a pattern's edges and the values just past them", () => {
    const { edges, past } = patternProbes('^(?:[0-9]{1,4}|0[0-9]{4}|10000)$', undefined)
    expect(edges.sort()).toEqual(['0', '0000', '00000', '09999', '10000', '9', '9999'])
    expect(past).toEqual(expect.arrayContaining(['', '000000', '10001', '20000', '0/0', '0:0']))
    expect(past).not.toContain('00000')
    // The pattern the document had: its edge 99999 is one the server refuses.
    expect(patternProbes('^[0-9]{1,5}$', undefined).edges).toContain('99999')
    const key = patternProbes('^[!-~]{1,255}$', 'abc')
    expect(key.edges).toEqual(expect.arrayContaining(['!', '~', '!'.repeat(255), '~'.repeat(255)]))
    expect(key.past).toEqual(expect.arrayContaining(['', 'a c', 'a\x7fc', 'abc'.padEnd(256, 'c')]))
    expect(() => alternatives('^(a|b)+$')).toThrow(/teach schema-bounds/)
    expect(() => alternatives('^a|b$')).toThrow(/alternation/)
  })
})

describe("every bound the document states on a request is the server's", () => {
  for (const operation of flow) {
    const probes = fields.filter((field) => field.operation === operation).flatMap((field) => probesOf(field, elsewhere, earlierValue(operation)))
    test(`${operation.key}: accepted on each bound, refused just past it, naming the field (${probes.length} probes)`, async () => {
      const answers = await inParallel(probes, 16, (probe) => runProbe(sandbox.app, flow, probe))
      expect(probes.map((probe, index) => mismatch(probe, answers[index]!)).filter(Boolean)).toEqual([])
    })
  }
})
