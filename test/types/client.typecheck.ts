/**
 * Type test, checked by `npm run typecheck` (tsc --noEmit), never run: the typed client accepts
 * what the sandbox accepts and refuses, at compile time, what it would refuse at run time.
 * Each `@ts-expect-error` fails the type check if the line below it ever compiles.
 */
import { createSandboxClient } from '../../src/client'

const sandbox = createSandboxClient('http://localhost:3000')
const trip = { origin_country: 'IN', destination_country: 'FR', start_date: '2026-12-20', end_date: '2026-12-30' }

export async function accepted() {
  const search = await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: 34 }], currency: 'EUR' })
  const planId: string | undefined = search.data?.data.plans[0]?.plan_id
  const issued = await sandbox.api.sandbox.policy.new.post({ plan_id: planId!, trip, travellers: [{ age: 34 }], partner_reference: 'BK-1' })
  const ref: string | undefined = issued.data?.data.policy_ref
  const modified = await sandbox.api.sandbox.policy({ policy_ref: ref! }).modify.post({ scenario: 'extend_end_date', new_end_date: '2027-01-02' })
  const sequence: number | undefined = modified.data?.data.endorsement.sequence
  const code: string | undefined = modified.error?.status === 404 ? modified.error.value.error.code : undefined
  // @ts-expect-error a 404 answer carries no data
  if (modified.error?.status === 404) modified.error.value.data
  return { sequence, code }
}

export async function refused() {
  // @ts-expect-error travellers carry an age only: no names
  await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: 34, name: 'Ann' }] })
  // @ts-expect-error age is a number
  await sandbox.api.sandbox.plans.search.post({ trip, travellers: [{ age: '34' }] })
  // @ts-expect-error trip is required
  await sandbox.api.sandbox.plans.search.post({ travellers: [{ age: 34 }] })
  // @ts-expect-error plan_id is required to issue
  await sandbox.api.sandbox.policy.new.post({ trip, travellers: [{ age: 34 }] })
  // @ts-expect-error scenarios come from a fixed list
  await sandbox.api.sandbox.policy({ policy_ref: 'pol_sbx_x' }).modify.post({ scenario: 'change_name' })
  // @ts-expect-error the answer has no such field
  ;(await sandbox.api.sandbox.session.post({})).data?.data.token
}
