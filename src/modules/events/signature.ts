/**
 * @module Webhook signatures, in the scheme partners know from Stripe: the header
 * `Sandbox-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" under the secret>`.
 * The typed client exports `verifyWebhook` from here, so sender and receiver share one definition.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

export const SIGNATURE_HEADER = 'Sandbox-Signature'

const digest = (secret: string, timestamp: number, rawBody: string) => createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex')

/** The header value for a body sent at `timestamp` (unix seconds). */
export function signatureHeader(secret: string, timestamp: number, rawBody: string): string {
  return `t=${timestamp},v1=${digest(secret, timestamp, rawBody)}`
}

/**
 * Whether `header` signs `rawBody` (the bytes as received, before any JSON parsing) with `secret`,
 * at most `toleranceSeconds` from now, which keeps a captured delivery from being replayed later.
 *
 * @example
 * if (!verifyWebhook(secret, request.headers.get('sandbox-signature'), await request.text())) return new Response(null, { status: 400 })
 */
export function verifyWebhook(
  secret: string,
  header: string | null | undefined,
  rawBody: string,
  options: { toleranceSeconds?: number; now?: number } = {},
): boolean {
  const fields = new Map((header ?? '').split(',').map((part) => part.trim().split('=', 2) as [string, string]))
  const timestamp = Number(fields.get('t'))
  const given = fields.get('v1') ?? ''
  if (!Number.isInteger(timestamp) || !/^[0-9a-f]{64}$/.test(given)) return false
  const now = Math.floor((options.now ?? Date.now()) / 1000)
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false
  return timingSafeEqual(Buffer.from(digest(secret, timestamp, rawBody), 'hex'), Buffer.from(given, 'hex'))
}
