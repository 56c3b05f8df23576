/**
 * Type test, checked by `npm run typecheck` (tsc --noEmit), never run: an `ApiError` names its
 * code and, where the table (src/errors.ts) has several messages or values, which one and with what;
 * it never takes words of its own. Each `@ts-expect-error` fails the type check if the line below it ever compiles.
 */
import { ApiError } from '../../src/errors'

export function accepted() {
  return [
    new ApiError('policy_not_found'),
    new ApiError('storage_unavailable', { retryAfter: 5, forced: true }),
    new ApiError('plan_not_found', { variant: 'notSearched', details: [{ field: 'plan_id', issue: 'was not returned' }] }),
    new ApiError('document_not_ready', { values: { readyAt: '2026-11-25T09:02:05.000Z' }, retryAfter: 3 }),
  ]
}

export function refused() {
  return [
    // @ts-expect-error no words of its own
    new ApiError('policy_not_found', 'No such policy.'),
    // @ts-expect-error nor as an option
    new ApiError('policy_not_found', { message: 'No such policy.' }),
    // @ts-expect-error plan_not_found says one of two things: which?
    new ApiError('plan_not_found'),
    // @ts-expect-error a variant the code does not have
    new ApiError('plan_not_found', { variant: 'gone' }),
    // @ts-expect-error a code with one message has no variants
    new ApiError('not_found', { variant: 'post' }),
    // @ts-expect-error the message carries readyAt
    new ApiError('document_not_ready', { retryAfter: 3 }),
    // @ts-expect-error the value of the wrong type
    new ApiError('document_not_ready', { values: { readyAt: 3 } }),
    // @ts-expect-error a code the contract does not have
    new ApiError('gone_fishing'),
  ]
}
