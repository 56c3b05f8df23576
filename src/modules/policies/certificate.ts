/**
 * @module The `policy_certificate` document: a specimen PDF drawn from the read-back view
 * (certificate-pdf.ts). The same policy state gives the same bytes: dates, producer and document id
 * come from the policy, never from the clock.
 */
import type { Services } from '../services'
import type { PolicyView } from './read'
import type { CertificateInput } from './certificate-pdf'

/** The certificate of a policy in its current state. */
export function certificateInput(services: Pick<Services, 'catalogue'>, view: PolicyView, product: string): CertificateInput {
  const definition = services.catalogue.plans.find((plan) => plan.product === product)
  return {
    view,
    plan: { name: definition?.name ?? view.plan_id, tier: definition?.tier ?? '', cover_type: definition?.cover_type ?? '' },
    minorUnit: services.catalogue.currencies[view.currency]?.minor_unit ?? 2,
  }
}

/** The PDF bytes: a function of the input alone. The drawing (pdf-lib) is loaded on first use. */
export async function renderCertificate(input: CertificateInput): Promise<Uint8Array> {
  const { drawCertificate } = await import('./certificate-pdf')
  return drawCertificate(input)
}
