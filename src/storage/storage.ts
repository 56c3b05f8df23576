/**
 * @module The storage seam: what services and HTTP code see of the database, whatever the engine.
 * Async throughout; the engine owns its transactions, its SQL and its faults (each engine turns its
 * own into `StorageUnavailable`). Engines: `sqlite/` (embedded default) and `postgres/`.
 */
import type { RateStatus } from '../domain/rate-window'
import type { Trip } from '../domain/trip'

/** What produced a plan or policy; it is also the answer's `mode`. */
export type Source = 'simulation' | 'uat_gateway'

export interface SessionRow {
  id: number
  ref: string
  expiresAt: number
  /** How far the session's business clock runs ahead of wall time (domain/session-clock.ts); 0 until advanced. */
  clockOffsetMs: number
}

export interface Quote<Plan = unknown> {
  planId: string
  product: string
  trip: Trip
  ages: number[]
  currency: string
  plan: Plan
  premiumMinor: number
  source: Source
  upstreamRef: string | null
}

export interface PolicyRecord {
  id: number
  sessionId: number
  ref: string
  svcInsuranceId: string
  planId: string
  product: string
  status: 'issued' | 'endorsed' | 'cancelled'
  trip: Trip
  travellers: { traveller_ref: string; age: number }[]
  partnerReference: string | null
  currency: string
  premiumMinor: number
  createdAt: number
  updatedAt: number
  source: Source
  /** The insurer's policy number for a UAT policy: stored, never shown. */
  upstreamRef: string | null
  /** When the certificate can be downloaded: the issue time, or later for a forced `document_pending`. */
  documentReadyAt: number
  /** Set once the policy is cancelled. */
  cancellation: Cancellation | null
  /** The certificate's version: 1, and one more for each reissue by the insurer. */
  documentVersion: number
  /** The cover events recorded: 0 none, 1 `policy.started`, 2 `policy.ended` too (domain/session-clock.ts). */
  coverageRecorded: 0 | 1 | 2
  /** When the next cover event falls due, in wall time; null when none will (both recorded, or cancelled). */
  coverageDueAt: number | null
}

export interface Cancellation {
  at: number
  /** Who cancelled: the partner (the cancel call) or the insurer (a test helper). */
  by: 'partner' | 'insurer'
  /** The refund given, as the rules of policies/refund.ts (or the insurer) priced it at `at`. */
  refundMinor: number
}

export interface EndorsementRecord {
  scenario: string
  changes: Record<string, { from: string | null; to: string }>
  premiumChangeMinor: number
  createdAt: number
}

export interface StoredAnswer {
  fingerprint: string
  response: unknown
}

export interface SessionStore {
  /**
   * Whether the session still runs at `now` (not expired, not swept). Inside a transaction it also
   * holds the session against the sweep until the transaction ends.
   */
  isLive(id: number, now: number): Promise<boolean>
  /**
   * The session's clock offset while it runs at `now` (null once it ended). Inside a transaction it
   * also holds the session until it ends, so two advances take turns (PostgreSQL: FOR NO KEY
   * UPDATE, which foreign keys' checks do not wait for; the cover poll skips the session meanwhile).
   */
  clockOffset(id: number, now: number): Promise<number | null>
  /** Sets the session's clock offset (it only grows: the caller checks). */
  setClockOffset(id: number, offsetMs: number): Promise<void>
  /** The live session with this public ref, and its token's hash (a console link is checked against it). */
  byRef(ref: string, now: number): Promise<(SessionRow & { tokenHash: string }) | undefined>
}

export interface QuoteStore {
  /** The quotes this session has not been given yet, or not from the same source: what `save` would change. */
  unsaved(sessionId: number, quotes: Quote[]): Promise<Quote[]>
  /**
   * Records the quotes while the session still runs at `now`, held against the sweep as `isLive`
   * holds it; false, recording nothing, once it has ended. One step: a search needs no transaction.
   */
  record(sessionId: number, quotes: Quote[], now: number): Promise<boolean>
  find<Plan>(sessionId: number, planId: string): Promise<Quote<Plan> | undefined>
}

export interface PolicyStore {
  insert(policy: Omit<PolicyRecord, 'id'>): Promise<PolicyRecord>
  /** The session's policy with this ref; inside a transaction, held until it ends (no lost update). */
  find(sessionId: number, ref: string): Promise<PolicyRecord | undefined>
  /**
   * Saves the policy's new state and appends the endorsement as number `sequence`: the history's
   * length + 1, read by the caller in the same transaction, which holds the policy (find).
   */
  endorse(policy: PolicyRecord, endorsement: EndorsementRecord, sequence: number): Promise<void>
  endorsements(policyId: number): Promise<EndorsementRecord[]>
  /** Saves the policy's cancellation (its status, `cancellation` and `updatedAt`; no cover event is due any more). */
  cancel(policy: PolicyRecord): Promise<void>
  /** Saves what changes without an endorsement: its certificate (`documentVersion`, `documentReadyAt`), its cover events, `updatedAt`. */
  update(policy: PolicyRecord): Promise<void>
  /** The session's policies, oldest first; inside a transaction, held until it ends (a cover event is recorded once). */
  ofSession(sessionId: number): Promise<PolicyRecord[]>
  /**
   * Up to `limit` policies of live sessions whose next cover event is due by wall time `now`, with
   * their session; inside a transaction each is held (PostgreSQL: skipped by another instance's
   * claim) until it ends, so each event is recorded once.
   */
  coverageDue(now: number, limit: number): Promise<{ policy: PolicyRecord; session: SessionRow }[]>
}

export interface IdempotencyStore {
  /** The stored first answer; inside a transaction, concurrent claims of the same key wait for this one. */
  find(sessionId: number, keyHash: string): Promise<StoredAnswer | undefined>
  save(sessionId: number, keyHash: string, fingerprint: string, response: unknown, now: number): Promise<void>
}

/** An event as it happens: `body` is the JSON delivered and listed, exactly. */
export interface NewEvent {
  ref: string
  sessionId: number
  type: string
  /** When it happens on the session's clock: listed from then on (later than its change for a pending certificate's `document.ready`). */
  at: number
  /** When its delivery is due, in wall time: the same moment on the real clock. */
  deliverAt: number
  body: string
}

export interface EventRecord extends Omit<NewEvent, 'deliverAt'> {
  id: number
}

/** One delivery attempt: the receiver's HTTP status, or why there was none. */
export interface AttemptRecord {
  attempt: number
  at: number
  status: number | null
  error: string | null
}

export interface ListedEvent extends EventRecord {
  /** Null when the event was never queued for delivery (no webhook when it happened). */
  delivery: { attempts: AttemptRecord[]; nextAt: number | null } | null
}

export interface EventStore {
  /** Appends an event and, when the session has a webhook, queues its delivery: in the change's transaction (an outbox). */
  append(event: NewEvent): Promise<void>
  /**
   * The session's events after `afterId`, oldest first, at most `limit`, up to the first that has not
   * happened by `now` (a pending certificate's `document.ready`): a cursor never passes an event it
   * has not seen. Within a session, ids follow commit order.
   */
  list(sessionId: number, afterId: number, now: number, limit: number): Promise<ListedEvent[]>
  find(sessionId: number, ref: string): Promise<EventRecord | undefined>
  /** Queues the event's delivery again from `now` (a resend), with every attempt of a first delivery; earlier attempts stay listed. */
  requeue(eventId: number, now: number): Promise<void>
}

export interface Webhook {
  url: string
  secret: string
}

export interface WebhookStore {
  find(sessionId: number): Promise<Webhook | undefined>
  /** Registers or replaces the session's endpoint; null removes it and drops its pending deliveries. */
  set(sessionId: number, webhook: Webhook | null, now: number): Promise<void>
}

/** Calls kept per session in its request log: the oldest go as new ones are written. */
export const REQUEST_LOG_PER_SESSION = 200

/** A call in a session's request log (modules/request-log/), as written. */
export interface LoggedCall {
  sessionId: number
  requestId: string
  /** When it was admitted (wall time). */
  at: number
  /** The path as logged (our words and references only). */
  path: string
  status: number
  /** The entry as the log lists it: JSON. */
  entry: string
}

/** Which of a session's calls to list, newest first. */
export interface RequestLogQuery {
  /** Only calls older than this one (the previous page's last: its time and id); null from the newest. */
  before: { at: number; id: number } | null
  /** Only calls answered 4xx or 5xx. */
  failedOnly: boolean
  path: string | null
  since: number | null
  until: number | null
  limit: number
}

/** A logged call as the log stores it: its entry's JSON, and the time and id the list orders by. */
export interface LoggedRow {
  id: number
  at: number
  entry: string
}

export interface RequestLogStore {
  /**
   * The session's calls, newest first (by the time each was admitted: instances write their calls
   * at their own pace, so ids do not follow the calls), as `query` narrows them.
   */
  list(sessionId: number, query: RequestLogQuery): Promise<LoggedRow[]>
  /** The session's call with this request id. */
  find(sessionId: number, requestId: string): Promise<LoggedRow | undefined>
}

export interface Stores {
  sessions: SessionStore
  quotes: QuoteStore
  policies: PolicyStore
  idempotency: IdempotencyStore
  events: EventStore
  webhooks: WebhookStore
  requestLog: RequestLogStore
}

/** Due deliveries a claim looks at, the longest due first: its cost stays the same whatever the backlog. */
export const CANDIDATES = 1000

/** How many deliveries to claim, and whose (storage.claimDeliveries). */
export interface DeliveryClaim {
  limit: number
  perSession: number
  skip: number[]
}

/** A delivery claimed for one attempt, with its session's endpoint. */
export interface Delivery {
  eventId: number
  /** The session whose event it is (one endpoint per session). */
  sessionId: number
  /** The claim: only its holder reschedules the delivery (a lapsed or re-queued claim records its attempt, nothing more). */
  lease: number
  /** This attempt's number since the event was queued (or queued again by a resend): 1 for the first. */
  attempt: number
  body: string
  ref: string
  type: string
  webhook: Webhook
}

/** A session to create for an admitted request that brings none. */
export interface NewSession {
  ref: string
  tokenHash: string
  expiresAt: number
}

export interface AdmissionRequest {
  /** Hash of the cookie's token, when the request brought one. */
  tokenHash: string | null
  /** The client network's counter key. */
  network: string
  now: number
  /**
   * Mints the session to create, and count, when the request is admitted without a live session;
   * null: create none. Called only then on SQLite, so a call with a live cookie mints no token and
   * hash (≈ 5 µs of a plan search); PostgreSQL calls it up front, its one round trip needs the values.
   */
  create: (() => NewSession) | null
}

export type Admission =
  | { kind: 'expired' }
  | { kind: 'refused'; status: RateStatus; session: SessionRow | null }
  | { kind: 'admitted'; status: RateStatus; session: SessionRow | null; created: boolean }

export interface SweepResult {
  sessionsPurged: number
  sessionsForgotten: number
  rateHitsDeleted: number
}

export interface Storage extends Stores {
  /**
   * Session expiry, then the rolling-window check of the session's and the network's counters, then
   * counting and (when asked) creating the session, exactly: in one transaction on PostgreSQL (across
   * the instances sharing it), in one synchronous step in the embedded engine's memory (its one
   * process sees every admission). A refusal counts nothing and creates nothing.
   */
  admit(request: AdmissionRequest): Promise<Admission>
  /** Creates a session and counts one request against it (explicit creation, after its checks). */
  openSession(session: NewSession, now: number): Promise<SessionRow>
  /** The allowance left on these counters, counting nothing. */
  allowance(keys: string[], now: number): Promise<RateStatus>
  /**
   * Runs `work` in one transaction: all its writes commit together or none does. Inside `work`, await
   * only the stores it is given: no other I/O (no insurer call, no other storage call), no timers.
   * On SQLite the connection's turn is held for the whole callback, so anything else it awaits stalls
   * every other request of the process (and a storage call outside `stores` waits for a turn that
   * never comes); on PostgreSQL it holds a pooled connection and its row locks. Do slow work before.
   */
  transaction<T>(work: (stores: Stores) => Promise<T>): Promise<T>
  /**
   * Claims up to `claim.limit` deliveries due at `now` for `leaseMs`, the longest due first, at most
   * `claim.perSession` of one session and none of the sessions in `claim.skip`: no other process or
   * instance attempts them until the lease ends (a process that dies mid-attempt leaves them to the
   * others after it).
   */
  claimDeliveries(now: number, leaseMs: number, claim: DeliveryClaim): Promise<Delivery[]>
  /**
   * Records an attempt (numbered after the event's earlier ones) and, while `lease` still holds the
   * delivery, when to try again (null: delivered, or given up). Nothing when the event is gone (swept).
   */
  recordAttempt(eventId: number, lease: number, attempt: Omit<AttemptRecord, 'attempt'>, nextAt: number | null): Promise<void>
  /**
   * The expiry sweep, in bounded batches (one short transaction each) until nothing is left, resting
   * between them so that requests go first; safe to run on every process and instance at once.
   */
  sweep(now: number): Promise<SweepResult>
  /**
   * Writes what the engine serves from memory ahead of the database (the embedded engine's
   * sessions, rate hits and quotes, written behind); PostgreSQL holds nothing back.
   */
  flush(): Promise<void>
  /**
   * Adds a call to its session's request log, written behind (`flush`, every 200 ms): the call's
   * answer never waits for it. A crash loses at most the last moments of it.
   */
  logCall(call: LoggedCall): void
  /** Resolves when the database takes a write; rejects with StorageUnavailable. */
  ping(): Promise<void>
  /** Milliseconds since the epoch, from the clock every process sharing this database agrees on. */
  clock(): number
  close(): Promise<void>
}

/** The database cannot serve now (read-only, full, unreachable, or a lock or statement timed out). */
export class StorageUnavailable extends Error {
  constructor(readonly reason: string) {
    super(`storage unavailable: ${reason}`)
  }
}
