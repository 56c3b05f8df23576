/**
 * @module The specimen certificate drawn with pdf-lib, marked SPECIMEN — SANDBOX — NOT INSURANCE on
 * every page (and CANCELLED once cancelled). Loaded on the first certificate asked for
 * (certificate.ts): pdf-lib took 15–20 ms of the compiled binary's start-up.
 */
import { createHash } from 'node:crypto'
import { PDFDocument, PDFHexString, StandardFonts, degrees, rgb, type PDFFont, type PDFPage } from 'pdf-lib'
import { coverDays } from '../plans/pricing'
import type { RefundRule } from './refund'
import type { PolicyView } from './read'

export const SPECIMEN_MARK = 'SPECIMEN — SANDBOX — NOT INSURANCE'
/** Stamped on every page of a cancelled policy's certificate. */
export const CANCELLED_MARK = 'CANCELLED'
const PRODUCER = 'travel-protection-sandbox'

/** What the certificate shows beyond the view: the plan's names, and how amounts are written. */
export interface CertificateInput {
  view: PolicyView
  plan: { name: string; tier: string; cover_type: string }
  /** Digits after the decimal point in `view.currency` (0 for JPY). */
  minorUnit: number
}

/** A4 in points, and the room the banner and footer leave for text. */
const PAGE = { width: 595.28, height: 841.89, margin: 50, top: 841.89 - 92, bottom: 72 }
const INK = rgb(0.1, 0.1, 0.12)
const MUTED = rgb(0.38, 0.38, 0.42)
const MARK_RED = rgb(0.7, 0.1, 0.1)

/** Lays text out top to bottom, starting a new page when one is full. */
class Layout {
  readonly pages: PDFPage[] = []
  private y = 0

  constructor(
    private readonly doc: PDFDocument,
    readonly regular: PDFFont,
    readonly bold: PDFFont,
    private readonly cancelled: boolean,
  ) {
    this.newPage()
  }

  /** A page with its mark drawn first, so that text extraction reads the mark, then the content. */
  private newPage() {
    const page = this.doc.addPage([PAGE.width, PAGE.height])
    page.drawRectangle({ x: 0, y: PAGE.height - 44, width: PAGE.width, height: 44, color: MARK_RED })
    const size = 16
    page.drawText(SPECIMEN_MARK, {
      x: (PAGE.width - this.bold.widthOfTextAtSize(SPECIMEN_MARK, size)) / 2,
      y: PAGE.height - 28,
      size,
      font: this.bold,
      color: rgb(1, 1, 1),
    })
    page.drawText('SPECIMEN', { x: 140, y: 250, size: 110, font: this.bold, color: MARK_RED, opacity: 0.07, rotate: degrees(45) })
    if (this.cancelled) {
      const width = this.bold.widthOfTextAtSize(CANCELLED_MARK, 14)
      page.drawRectangle({
        x: PAGE.width - PAGE.margin - width - 16,
        y: PAGE.height - 78,
        width: width + 16,
        height: 26,
        borderColor: MARK_RED,
        borderWidth: 2,
      })
      page.drawText(CANCELLED_MARK, { x: PAGE.width - PAGE.margin - width - 8, y: PAGE.height - 70, size: 14, font: this.bold, color: MARK_RED })
    }
    this.pages.push(page)
    this.y = PAGE.top
  }

  private get page() {
    return this.pages.at(-1)!
  }

  /** Starts a new page unless `height` points fit on this one (keeps what belongs together). */
  keep(height: number) {
    if (this.y - height < PAGE.bottom) this.newPage()
  }

  /** One paragraph, wrapped to the page width (less `indent`). */
  text(text: string, options: { size?: number; bold?: boolean; indent?: number; color?: ReturnType<typeof rgb>; after?: number } = {}) {
    const { size = 10, indent = 0, color = INK, after = 0 } = options
    const font = options.bold ? this.bold : this.regular
    for (const line of wrap(text, font, size, PAGE.width - 2 * PAGE.margin - indent)) {
      if (this.y - size < PAGE.bottom) this.newPage()
      this.y -= size * 1.35
      this.page.drawText(line, { x: PAGE.margin + indent, y: this.y, size, font, color })
    }
    this.y -= after
  }

  /** A label and its value on one line (the value wraps under itself). */
  field(label: string, value: string) {
    this.keep(14)
    const y = this.y
    this.page.drawText(label, { x: PAGE.margin, y: y - 13.5, size: 10, font: this.bold, color: MUTED })
    this.text(value, { indent: 150 })
  }

  heading(text: string) {
    this.keep(60) // a heading with its first lines
    this.y -= 10
    this.text(text, { size: 13, bold: true, after: 4 })
  }
}

/** Greedy word wrap by the font's own widths; a word longer than the line is cut. */
function wrap(text: string, font: PDFFont, size: number, width: number): string[] {
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    const candidate = line ? `${line} ${word}` : word
    if (font.widthOfTextAtSize(candidate, size) <= width) {
      line = candidate
      continue
    }
    if (line) lines.push(line)
    line = word
    while (font.widthOfTextAtSize(line, size) > width) {
      let cut = line.length - 1
      while (cut > 1 && font.widthOfTextAtSize(line.slice(0, cut), size) > width) cut--
      lines.push(line.slice(0, cut))
      line = line.slice(cut)
    }
  }
  lines.push(line)
  return lines
}

const REFUND_WORDS: Record<RefundRule, string> = {
  full_before_start: 'whole premium, cancelled before the start date',
  pro_rata_unused_days: 'unused whole days pro rata',
  none_after_end: 'nothing, cancelled after the end date',
  full_insurer_cancellation: 'whole premium, cancelled by the insurer',
}

const money = (amount: number, input: CertificateInput, sign = '') => `${input.view.currency} ${sign}${amount.toFixed(input.minorUnit)}`
const signed = (amount: number, input: CertificateInput) => money(Math.abs(amount), input, amount > 0 ? '+' : amount < 0 ? '-' : '')
/** `2026-11-22T10:15:00.000Z` → `2026-11-22 10:15:00 UTC`. */
const readable = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`

function body(layout: Layout, input: CertificateInput) {
  const { view } = input
  layout.text('Travel protection certificate', { size: 20, bold: true, after: 2 })
  layout.text(
    'A specimen from the travel protection sandbox, for testing an integration. It insures nobody and nothing, and carries over to nothing in production.',
    { color: MUTED, after: 6 },
  )

  layout.heading('References')
  layout.field('Policy reference', view.policy_ref)
  layout.field('Service insurance id', view.svc_insurance_id)
  layout.field('Partner reference', view.partner_reference ?? 'none')
  layout.field('Status', view.status)
  layout.field('Cover', view.coverage)
  layout.field('Certificate version', String(view.documents[0]!.version ?? 1))
  layout.field('Issued', readable(view.created_at))
  layout.field('Last changed', readable(view.updated_at))

  layout.heading('Plan')
  layout.field('Plan', `${input.plan.name} (${input.plan.tier}, ${input.plan.cover_type})`)
  layout.field('Plan id', view.plan_id)

  layout.heading('Trip')
  layout.field('From', view.trip.origin_country)
  layout.field('To', view.trip.destination_country)
  layout.field('Cover', `${view.trip.start_date} to ${view.trip.end_date} (${coverDays(view.trip)} days, both included)`)

  layout.heading('Travellers')
  layout.field('Traveller ages', view.travellers.map((traveller) => traveller.age).join(', '))
  view.travellers.forEach((traveller, index) => layout.field(`Traveller ${index + 1}`, `age ${traveller.age}, ref ${traveller.traveller_ref}`))
  layout.field('Identity', view.traveller_identity)

  layout.heading('Indicative premium')
  layout.field('Premium', `${money(view.premium, input)} (indicative sandbox price: not a quote, never to be shown to travellers)`)

  if (view.cancellation) {
    const { refund } = view.cancellation
    layout.heading('Cancellation')
    layout.field('Cancelled', readable(view.cancellation.cancelled_at))
    layout.field('Refund', `${money(refund.amount, input)} (${REFUND_WORDS[refund.rule]}: ${refund.unused_days} unused of ${refund.cover_days} days)`)
  }

  layout.heading('Endorsement history')
  if (view.endorsements.length === 0) layout.text('No endorsements.')
  for (const endorsement of view.endorsements) {
    layout.keep(32)
    layout.text(`#${endorsement.sequence}  ${readable(endorsement.created_at)}  ${endorsement.scenario}`, { bold: true })
    layout.text(
      `${endorsement.field}: ${endorsement.old_value ?? 'none'} to ${endorsement.new_value}; premium change ${signed(endorsement.premium_change, input)}`,
      { indent: 16, after: 3 },
    )
  }
}

/** The footer of every page, once the number of pages is known: the mark again, and the page number. */
function footPages(layout: Layout, policyRef: string) {
  const { pages, regular } = layout
  pages.forEach((page, index) => {
    const footer = `${SPECIMEN_MARK} · ${policyRef} · page ${index + 1} of ${pages.length}`
    page.drawText(footer, { x: PAGE.margin, y: 40, size: 8, font: regular, color: MUTED })
  })
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 32)

/** The PDF bytes: a function of the input alone. */
export async function drawCertificate(input: CertificateInput): Promise<Uint8Array> {
  const { view } = input
  // updateMetadata: false, or pdf-lib stamps the current time and its own producer.
  const doc = await PDFDocument.create({ updateMetadata: false })
  const layout = new Layout(doc, await doc.embedFont(StandardFonts.Helvetica), await doc.embedFont(StandardFonts.HelveticaBold), view.status === 'cancelled')
  body(layout, input)
  footPages(layout, view.policy_ref)
  doc.setTitle(`Policy certificate ${view.policy_ref} (specimen)`)
  doc.setSubject(SPECIMEN_MARK)
  doc.setProducer(PRODUCER)
  doc.setCreator(PRODUCER)
  doc.setCreationDate(new Date(view.created_at))
  doc.setModificationDate(new Date(view.updated_at))
  // The file identifier (PDF 14.4): the first part names the policy, the second this state of it.
  const state = `${view.svc_insurance_id} ${view.updated_at} ${view.endorsements.length} ${view.documents[0]!.version ?? 1} ${view.coverage}`
  doc.context.trailerInfo.ID = doc.context.obj([PDFHexString.of(digest(view.svc_insurance_id)), PDFHexString.of(digest(state))])
  return doc.save({ useObjectStreams: false })
}
