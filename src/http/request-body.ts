/**
 * @module Reading a request body within the contract's limits: at most 16 KiB, never buffered past
 * that, JSON only. Runs after the session and rate checks, as the contract's order requires.
 */
import { ApiError } from '../errors'

export const MAX_BODY_BYTES = 16 * 1024
/** A body still incomplete this long after the sandbox started reading it is refused (slow clients). */
export const BODY_DEADLINE_MS = 10_000

const tooLarge = () => new ApiError('payload_too_large', `The body may be at most ${MAX_BODY_BYTES} bytes.`)

/** The parsed JSON body; an empty body reads as `{}`. */
export async function readJsonBody(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get('content-length'))
  if (declared > MAX_BODY_BYTES) throw tooLarge()
  const bytes = await readBounded(request)
  if (bytes.length === 0) return {}
  if (!isJsonMediaType(request.headers.get('content-type'))) {
    throw new ApiError('unsupported_media_type', 'Send the body as application/json.')
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    throw new ApiError('invalid_json', 'The body is not valid JSON.')
  }
}

function isJsonMediaType(header: string | null): boolean {
  return header?.split(';')[0]?.trim().toLowerCase() === 'application/json'
}

/** Reads the stream chunk by chunk; stops as soon as the size limit is passed or the deadline. */
async function readBounded(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: BlobPart[] = []
  let size = 0
  let timer: ReturnType<typeof setTimeout> | undefined
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), BODY_DEADLINE_MS)))
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), expired])
      if (next === 'expired') {
        void reader.cancel().catch(() => {})
        throw new ApiError('request_timeout', `The body did not arrive within ${BODY_DEADLINE_MS / 1000} seconds.`)
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
    clearTimeout(timer)
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer())
}
