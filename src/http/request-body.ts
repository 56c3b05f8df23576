/**
 * @module Reading a request body within the contract's limits: at most 16 KiB, never buffered past
 * that, JSON only. Runs after the session and rate checks, as the contract's order requires.
 */
import { ApiError } from '../errors'

export const MAX_BODY_BYTES = 16 * 1024

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

/** Reads the stream chunk by chunk and stops as soon as the limit is passed. */
async function readBounded(request: Request): Promise<Uint8Array> {
  if (!request.body) return new Uint8Array()
  const reader = request.body.getReader()
  const chunks: BlobPart[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_BODY_BYTES) {
      await reader.cancel()
      throw tooLarge()
    }
    chunks.push(value)
  }
  return new Uint8Array(await new Blob(chunks).arrayBuffer())
}
