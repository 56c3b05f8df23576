/**
 * @module Migrations both engines ship alike, written once: each engine renders them with its own
 * column types (`ColumnTypes`) into its numbered list (sqlite/migrations.ts, postgres/migrations.ts).
 * As there: append, never edit one that has shipped.
 */

/** How an engine spells the columns the shared migrations use. */
export interface ColumnTypes {
  /** A whole number up to 2^53: milliseconds, ids, minor units. */
  bigint: string
  /** A whole number that stays small: counts, sequence numbers, HTTP statuses. */
  integer: string
  text: string
  /** The primary key of a table whose rows get their id from the database. */
  id: string
  /** Ends a table whose primary key is its own columns (SQLite then keeps no rowid). */
  keyed: string
}

export const ENDORSEMENTS_AND_IDEMPOTENCY = (t: ColumnTypes) => `
  CREATE TABLE endorsements (
    policy_id            ${t.bigint} NOT NULL REFERENCES policies (id) ON DELETE CASCADE,
    sequence             ${t.integer} NOT NULL,
    scenario             ${t.text} NOT NULL,
    changes              ${t.text} NOT NULL,
    premium_change_minor ${t.bigint} NOT NULL,
    created_at           ${t.bigint} NOT NULL,
    PRIMARY KEY (policy_id, sequence)
  )${t.keyed};

  CREATE TABLE idempotency (
    session_id  ${t.bigint} NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    key         ${t.text} NOT NULL,
    fingerprint ${t.text} NOT NULL,
    response    ${t.text} NOT NULL,
    created_at  ${t.bigint} NOT NULL,
    PRIMARY KEY (session_id, key)
  )${t.keyed};
  `

/**
 * Cancellation with its refund (the rule that gave it follows from the trip and the day), and when
 * the certificate is ready (later than issue only for a forced `document_pending`; its issue time for
 * every policy issued before).
 */
export const CANCELLATION = (t: ColumnTypes) => `
  ALTER TABLE policies ADD COLUMN document_ready_at ${t.bigint} NOT NULL DEFAULT 0;
  UPDATE policies SET document_ready_at = created_at;
  ALTER TABLE policies ADD COLUMN cancelled_at ${t.bigint};
  ALTER TABLE policies ADD COLUMN refund_minor ${t.bigint};
  `

/**
 * Events, an outbox written in the transaction of the change each reports; the session's one webhook
 * endpoint; deliveries, rows rather than timers so that they survive a restart, each claimed by one
 * process or instance at a time; and every delivery attempt's outcome.
 */
export const EVENTS = (t: ColumnTypes) => `
  CREATE TABLE webhooks (
    session_id ${t.bigint} PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
    url        ${t.text} NOT NULL,
    secret     ${t.text} NOT NULL,
    created_at ${t.bigint} NOT NULL
  );
  CREATE TABLE events (
    id         ${t.id},
    ref        ${t.text} NOT NULL UNIQUE,
    session_id ${t.bigint} NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    type       ${t.text} NOT NULL,
    at         ${t.bigint} NOT NULL,
    body       ${t.text} NOT NULL
  );
  CREATE INDEX events_by_session ON events (session_id, id);
  CREATE TABLE deliveries (
    event_id      ${t.bigint} PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
    attempts      ${t.integer} NOT NULL DEFAULT 0,
    next_at       ${t.bigint},
    claimed_until ${t.bigint} NOT NULL DEFAULT 0
  );
  CREATE INDEX deliveries_due ON deliveries (next_at) WHERE next_at IS NOT NULL;
  CREATE TABLE delivery_attempts (
    event_id ${t.bigint} NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    attempt  ${t.integer} NOT NULL,
    at       ${t.bigint} NOT NULL,
    status   ${t.integer},
    error    ${t.text},
    PRIMARY KEY (event_id, attempt)
  )${t.keyed};
  `

/**
 * A clock per session (its business time runs `clock_offset_ms` ahead of wall time; it only moves
 * forward), and what a policy's cover over time needs: the cover events recorded so far (0 none,
 * 1 `policy.started`, 2 `policy.ended` too), when the next is due in wall time (null: none is),
 * the certificate's version (an insurer reissue adds one) and who cancelled. Policies issued before
 * it record no cover events (`coverage_recorded` 2): their sessions last an hour or so.
 */
export const SESSION_CLOCK = (t: ColumnTypes) => `
  ALTER TABLE sessions ADD COLUMN clock_offset_ms ${t.bigint} NOT NULL DEFAULT 0;
  ALTER TABLE policies ADD COLUMN coverage_recorded ${t.integer} NOT NULL DEFAULT 0;
  ALTER TABLE policies ADD COLUMN coverage_due_at ${t.bigint};
  ALTER TABLE policies ADD COLUMN document_version ${t.integer} NOT NULL DEFAULT 1;
  ALTER TABLE policies ADD COLUMN cancelled_by ${t.text};
  CREATE INDEX policies_coverage_due ON policies (coverage_due_at) WHERE coverage_due_at IS NOT NULL;
  UPDATE policies SET coverage_recorded = 2;
  `

/**
 * The request log: each call a session makes, as its log lists it (`entry`, JSON), with what the
 * list filters on beside it. At most `REQUEST_LOG_PER_SESSION` per session (the oldest go as new
 * ones are written); swept with the session.
 */
export const REQUEST_LOG = (t: ColumnTypes) => `
  CREATE TABLE request_log (
    id         ${t.id},
    session_id ${t.bigint} NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    request_id ${t.text} NOT NULL,
    at         ${t.bigint} NOT NULL,
    path       ${t.text} NOT NULL,
    status     ${t.integer} NOT NULL,
    entry      ${t.text} NOT NULL
  );
  CREATE INDEX request_log_by_session ON request_log (session_id, at, id);
  `
