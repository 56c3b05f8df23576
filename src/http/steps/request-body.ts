/**
 * @module The body step: reading a request body within the contract's limits (at most 16 KiB,
 * never buffered past that, JSON only), then refusing personal data. Runs after the session and
 * rate checks, as the contract's order requires.
 */
import { Elysia } from 'elysia'
import { rejectPersonalData } from '../../domain/personal-data'
import { ApiError } from '../../errors'
import { stateOf } from '../request-state'

export const MAX_BODY_BYTES = 16 * 1024
/** A body still incomplete this long after the sandbox started reading it is refused (slow clients). */
export const BODY_DEADLINE_MS = 10_000

const UTF8 = new TextDecoder('utf-8', { fatal: true })

const tooLarge = () => new ApiError('payload_too_large', { values: { maxBytes: MAX_BODY_BYTES } })

/** The parsed JSON body; an empty body reads as `{}`. */
export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = request.headers.get('content-length')
  if (Number(declared) > MAX_BODY_BYTES) throw tooLarge()
  // The runtime stops a body at its declared length, so it can be read whole (streaming it cost
  // about a tenth of a plan search under load); only a chunked body must be counted as it arrives.
  const whole = declared !== null && !request.headers.has('transfer-encoding')
  const bytes = whole ? await readDeclared(request) : await readBounded(request)
  if (bytes.length === 0) return {}
  if (!isJsonMediaType(request.headers.get('content-type'))) {
    throw new ApiError('unsupported_media_type')
  }
  let text: string
  let body: unknown
  try {
    text = UTF8.decode(bytes)
    body = JSON.parse(text)
  } catch {
    throw new ApiError('invalid_json', { variant: 'notJson' })
  }
  return MAY_NAME_TO_STRING.test(text) ? printable(body) : body
}

/** A body that may hold a `toString` member, spelled out or with `\u` escapes. */
const MAY_NAME_TO_STRING = /toString|\\u/

/**
 * A JSON object with its own `toString` (never a function in JSON) throws when made a string, and
 * Elysia makes the value a string when it words a validation error: such a body answered 500 (found
 * by fuzz.test.ts). Those objects get a hidden `Symbol.toPrimitive`, which neither JSON, validation
 * nor our code sees. Walked with a list, not a reviver: a reviver recurses, and a body nested
 * thousands deep overflowed the stack. Only when the text may need it.
 */
function printable(body: unknown): unknown {
  const pending = [body]
  while (pending.length > 0) {
    const value = pending.pop()
    if (value === null || typeof value !== 'object') continue
    if (Object.hasOwn(value, 'toString')) {
      Object.defineProperty(value, Symbol.toPrimitive, { value: () => '[object Object]' })
    }
    pending.push(...Object.values(value))
  }
  return body
}

function isJsonMediaType(header: string | null): boolean {
  return header?.split(';')[0]?.trim().toLowerCase() === 'application/json'
}

const tooSlow = () => new ApiError('request_timeout', { values: { seconds: BODY_DEADLINE_MS / 1000 } })

/**
 * The body stream failed: the client went away mid-body, or its chunked encoding is malformed. The
 * caller's doing, not ours: a 400 (which it will rarely see), not an internal error with a stack.
 * The connection's framing is lost with it, so the answer closes the connection (error-answer.ts).
 */
export class UnreadableBody extends ApiError {
  constructor() {
    super('invalid_json', { variant: 'unreadable' })
  }
}

function unreadable(): never {
  throw new UnreadableBody()
}

function deadline() {
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), BODY_DEADLINE_MS)))
  return { expired, clear: () => clearTimeout(timer) }
}

/** A body of a declared length (at most the limit, checked before): read whole, within the deadline. */
async function readDeclared(request: Request): Promise<Uint8Array> {
  const { expired, clear } = deadline()
  try {
    const body = await Promise.race([request.arrayBuffer().catch(unreadable), expired])
    if (body === 'expired') throw tooSlow()
    if (body.byteLength > MAX_BODY_BYTES) throw tooLarge() // a length header the runtime read otherwise
    return new Uint8Array(body)
  } finally {
    clear()
  }
}

/** Reads the stream chunk by chunk; stops as soon as the size limit is passed or the deadline. */
async function readBounded(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: BlobPart[] = []
  let size = 0
  const { expired, clear } = deadline()
  try {
    for (;;) {
      const next = await Promise.race([reader.read().catch(unreadable), expired])
      if (next === 'expired') {
        void reader.cancel().catch(() => {})
        throw tooSlow()
      }
      if (next.done) break
      size += next.value.byteLength
      if (size > MAX_BODY_BYTES) {
        void reader.cancel().catch(() => {})
        throw tooLarge()
      }
      chunks.push(next.value)
    }
  } finally {
    clear()
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer())
}

/** Placeholder body: Elysia must not read the stream before the session and rate checks. */
const BODY_DEFERRED = Symbol('body deferred')

/** Reads the body once the call is admitted, and refuses personal data. */
export const bodyReader = new Elysia({ name: 'sandbox-body' })
  .onParse({ as: 'global' }, () => BODY_DEFERRED)
  .onTransform({ as: 'global' }, async (context) => {
    const body = await readJsonBody(context.request)
    rejectPersonalData(body)
    // Only now may the request log keep it: a body refused for personal data is never kept.
    stateOf(context.request).loggedBody = body
    context.body = body
  })
