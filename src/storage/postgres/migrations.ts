/**
 * @module The PostgreSQL schema, as numbered migrations recorded in `sandbox_migrations`. All of them
 * run in one transaction under an advisory lock, so instances starting together migrate once.
 * Append a migration to change the schema; never edit one that has shipped.
 */
import type { Sql } from 'postgres'
import { CANCELLATION, ENDORSEMENTS_AND_IDEMPOTENCY, EVENTS, REQUEST_LOG, SESSION_CLOCK, type ColumnTypes } from '../migrations'
import { inTransaction } from './driver'

/** Any fixed number: the advisory lock every instance takes to migrate. */
const MIGRATION_LOCK = 0x5_a_b_d_b_0_0_1

const TYPES: ColumnTypes = { bigint: 'bigint', integer: 'integer', text: 'text', id: 'bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY', keyed: '' }

export const MIGRATIONS: string[] = [
  `
  CREATE TABLE sessions (
    id          bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ref         text    NOT NULL UNIQUE,
    token_hash  text    NOT NULL UNIQUE,
    created_at  bigint  NOT NULL,
    expires_at  bigint  NOT NULL,
    purged      boolean NOT NULL DEFAULT false
  );
  CREATE INDEX sessions_by_expiry ON sessions (purged, expires_at);

  -- Admitted requests per key and millisecond, and a running total per key with its oldest and
  -- newest hit, so that a check reads one row while no hit has left the window.
  CREATE TABLE rate_hits (
    key  text    NOT NULL,
    at   bigint  NOT NULL,
    hits integer NOT NULL,
    PRIMARY KEY (key, at)
  );
  CREATE TABLE rate_counters (
    key    text    PRIMARY KEY,
    used   integer NOT NULL,
    oldest bigint  NOT NULL,
    newest bigint  NOT NULL
  );
  CREATE INDEX rate_counters_by_newest ON rate_counters (newest);

  CREATE TABLE quotes (
    session_id   bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    plan_id      text   NOT NULL,
    trip         text   NOT NULL,
    ages         text   NOT NULL,
    currency     text   NOT NULL,
    plan         text   NOT NULL,
    source       text   NOT NULL,
    upstream_ref text,
    PRIMARY KEY (session_id, plan_id)
  );

  CREATE TABLE policies (
    id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id        bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    ref               text   NOT NULL UNIQUE,
    svc_insurance_id  text   NOT NULL UNIQUE,
    plan_id           text   NOT NULL,
    product           text   NOT NULL,
    status            text   NOT NULL,
    trip              text   NOT NULL,
    travellers        text   NOT NULL,
    partner_reference text,
    currency          text   NOT NULL,
    premium_minor     bigint NOT NULL,
    created_at        bigint NOT NULL,
    updated_at        bigint NOT NULL,
    source            text   NOT NULL,
    upstream_ref      text
  );
  CREATE INDEX policies_by_session ON policies (session_id);

  ` +
    ENDORSEMENTS_AND_IDEMPOTENCY(TYPES) +
    `

  -- A key's requests still in the window (before this one), the oldest of them, and how many
  -- recorded hits have left it. One statement, so one snapshot: another instance may prune the key
  -- at any moment.
  CREATE FUNCTION sandbox_rate_reading(p_key text, p_cutoff bigint, OUT used integer, OUT oldest bigint, OUT stale integer)
  LANGUAGE sql STABLE AS $$
    SELECT COALESCE(r.used - r.stale, 0)::integer, r.oldest, COALESCE(r.stale, 0)::integer
    FROM (SELECT 1) one LEFT JOIN LATERAL (
      SELECT c.used,
        CASE WHEN c.oldest > p_cutoff THEN 0
             ELSE (SELECT COALESCE(SUM(h.hits), 0) FROM rate_hits h WHERE h.key = c.key AND h.at <= p_cutoff) END AS stale,
        CASE WHEN c.oldest > p_cutoff THEN c.oldest
             ELSE (SELECT h.at FROM rate_hits h WHERE h.key = c.key AND h.at > p_cutoff ORDER BY h.at LIMIT 1) END AS oldest
      FROM rate_counters c WHERE c.key = p_key
    ) r ON true
  $$;

  -- Session expiry, the rolling-window check of the session's and the network's counters, counting,
  -- and creating the session (when p_new_ref is given and the request brings no live session): one
  -- round trip, one transaction. A full key is refused from a read that takes no lock; otherwise the
  -- keys are locked in a fixed order (text order), read again, and counted. Answers the readings
  -- before this request, in key order (session first), for the caller's arithmetic. Without a network
  -- (p_network NULL) it only creates the session and counts the request against it.
  CREATE FUNCTION sandbox_admit(p_token_hash text, p_network text, p_now bigint, p_window bigint, p_limit integer,
                                p_new_ref text, p_new_token_hash text, p_new_expires bigint)
  RETURNS TABLE (outcome text, session_id bigint, session_ref text, session_expires bigint, readings jsonb)
  LANGUAGE plpgsql AS $$
  #variable_conflict use_column
  DECLARE
    v_cutoff   bigint := p_now - p_window;
    v_session  sessions%ROWTYPE;
    v_keys     text[];
    v_key      text;
    v_reading  record;
    v_used     integer[] := '{}';
    v_oldest   bigint[] := '{}';
    v_stale    integer[] := '{}';
    v_full     boolean := false;
    v_locked   boolean := false;
    v_readings jsonb;
  BEGIN
    IF p_token_hash IS NOT NULL THEN
      SELECT * INTO v_session FROM sessions s WHERE s.token_hash = p_token_hash;
      IF FOUND AND v_session.expires_at <= p_now THEN
        RETURN QUERY SELECT 'expired'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::jsonb;
        RETURN;
      END IF;
    END IF;
    v_keys := ARRAY[]::text[];
    IF v_session.id IS NOT NULL THEN v_keys := v_keys || ('s:' || v_session.ref); END IF;
    IF p_network IS NOT NULL THEN v_keys := v_keys || p_network; END IF;

    LOOP
      v_used := '{}'; v_oldest := '{}'; v_stale := '{}'; v_full := false;
      FOREACH v_key IN ARRAY v_keys LOOP
        SELECT * INTO v_reading FROM sandbox_rate_reading(v_key, v_cutoff);
        v_used := v_used || v_reading.used;
        v_oldest := v_oldest || v_reading.oldest;
        v_stale := v_stale || v_reading.stale;
        v_full := v_full OR v_reading.used >= p_limit;
      END LOOP;
      -- A refusal writes nothing, and hits only leave the window as time passes: a read without
      -- the lock is already exact for it.
      SELECT jsonb_agg(jsonb_build_object('used', u, 'oldest', o) ORDER BY n) INTO v_readings
      FROM unnest(v_used, v_oldest) WITH ORDINALITY AS x(u, o, n);
      IF v_full THEN
        RETURN QUERY SELECT 'refused'::text, v_session.id, v_session.ref, v_session.expires_at, v_readings;
        RETURN;
      END IF;
      EXIT WHEN v_locked;
      FOR v_key IN SELECT k FROM unnest(v_keys) AS k ORDER BY k LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(v_key, 0));
      END LOOP;
      v_locked := true;
    END LOOP;

    IF v_session.id IS NULL AND p_new_ref IS NOT NULL THEN
      INSERT INTO sessions (ref, token_hash, created_at, expires_at)
      VALUES (p_new_ref, p_new_token_hash, p_now, p_new_expires) RETURNING * INTO v_session;
      -- A new key: nobody else can hold it yet.
      v_keys := v_keys || ('s:' || v_session.ref);
      v_used := v_used || 0; v_oldest := v_oldest || NULL::bigint; v_stale := v_stale || 0;
    END IF;

    FOR i IN 1 .. cardinality(v_keys) LOOP
      IF v_stale[i] > 0 THEN
        DELETE FROM rate_hits h WHERE h.key = v_keys[i] AND h.at <= v_cutoff;
      END IF;
      INSERT INTO rate_hits AS h (key, at, hits) VALUES (v_keys[i], p_now, 1)
      ON CONFLICT (key, at) DO UPDATE SET hits = h.hits + 1;
      -- Instances read their clocks before waiting for the lock, so a request may be counted after a
      -- later one: newest only grows, and the oldest hit may be the one counted now.
      INSERT INTO rate_counters AS c (key, used, oldest, newest)
      VALUES (v_keys[i], v_used[i] + 1, LEAST(COALESCE(v_oldest[i], p_now), p_now), p_now)
      ON CONFLICT (key) DO UPDATE SET used = excluded.used, oldest = excluded.oldest, newest = GREATEST(c.newest, excluded.newest);
    END LOOP;

    RETURN QUERY SELECT 'admitted'::text, v_session.id, v_session.ref, v_session.expires_at, v_readings;
  END
  $$;
  `,
  // 2: a policy's cancellation and when its certificate is ready (../migrations.ts, as on SQLite).
  CANCELLATION(TYPES),
  // 3: events, webhooks and deliveries (../migrations.ts, as on SQLite).
  EVENTS(TYPES),
  // 4: a clock per session, and cover over time (../migrations.ts, as on SQLite); admission answers
  // the session's clock offset too, so every answer can say its business time.
  `${SESSION_CLOCK(TYPES)}
  DROP FUNCTION sandbox_admit(text, text, bigint, bigint, integer, text, text, bigint);
  CREATE FUNCTION sandbox_admit(p_token_hash text, p_network text, p_now bigint, p_window bigint, p_limit integer,
                                p_new_ref text, p_new_token_hash text, p_new_expires bigint)
  RETURNS TABLE (outcome text, session_id bigint, session_ref text, session_expires bigint, readings jsonb, session_clock_offset bigint)
  LANGUAGE plpgsql AS $$
  #variable_conflict use_column
  DECLARE
    v_cutoff   bigint := p_now - p_window;
    v_session  sessions%ROWTYPE;
    v_keys     text[];
    v_key      text;
    v_reading  record;
    v_used     integer[] := '{}';
    v_oldest   bigint[] := '{}';
    v_stale    integer[] := '{}';
    v_full     boolean := false;
    v_locked   boolean := false;
    v_readings jsonb;
  BEGIN
    IF p_token_hash IS NOT NULL THEN
      SELECT * INTO v_session FROM sessions s WHERE s.token_hash = p_token_hash;
      IF FOUND AND v_session.expires_at <= p_now THEN
        RETURN QUERY SELECT 'expired'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::jsonb, NULL::bigint;
        RETURN;
      END IF;
    END IF;
    v_keys := ARRAY[]::text[];
    IF v_session.id IS NOT NULL THEN v_keys := v_keys || ('s:' || v_session.ref); END IF;
    IF p_network IS NOT NULL THEN v_keys := v_keys || p_network; END IF;

    LOOP
      v_used := '{}'; v_oldest := '{}'; v_stale := '{}'; v_full := false;
      FOREACH v_key IN ARRAY v_keys LOOP
        SELECT * INTO v_reading FROM sandbox_rate_reading(v_key, v_cutoff);
        v_used := v_used || v_reading.used;
        v_oldest := v_oldest || v_reading.oldest;
        v_stale := v_stale || v_reading.stale;
        v_full := v_full OR v_reading.used >= p_limit;
      END LOOP;
      -- A refusal writes nothing, and hits only leave the window as time passes: a read without
      -- the lock is already exact for it.
      SELECT jsonb_agg(jsonb_build_object('used', u, 'oldest', o) ORDER BY n) INTO v_readings
      FROM unnest(v_used, v_oldest) WITH ORDINALITY AS x(u, o, n);
      IF v_full THEN
        RETURN QUERY SELECT 'refused'::text, v_session.id, v_session.ref, v_session.expires_at, v_readings, v_session.clock_offset_ms;
        RETURN;
      END IF;
      EXIT WHEN v_locked;
      FOR v_key IN SELECT k FROM unnest(v_keys) AS k ORDER BY k LOOP
        PERFORM pg_advisory_xact_lock(hashtextextended(v_key, 0));
      END LOOP;
      v_locked := true;
    END LOOP;

    IF v_session.id IS NULL AND p_new_ref IS NOT NULL THEN
      INSERT INTO sessions (ref, token_hash, created_at, expires_at)
      VALUES (p_new_ref, p_new_token_hash, p_now, p_new_expires) RETURNING * INTO v_session;
      -- A new key: nobody else can hold it yet.
      v_keys := v_keys || ('s:' || v_session.ref);
      v_used := v_used || 0; v_oldest := v_oldest || NULL::bigint; v_stale := v_stale || 0;
    END IF;

    FOR i IN 1 .. cardinality(v_keys) LOOP
      IF v_stale[i] > 0 THEN
        DELETE FROM rate_hits h WHERE h.key = v_keys[i] AND h.at <= v_cutoff;
      END IF;
      INSERT INTO rate_hits AS h (key, at, hits) VALUES (v_keys[i], p_now, 1)
      ON CONFLICT (key, at) DO UPDATE SET hits = h.hits + 1;
      -- Instances read their clocks before waiting for the lock, so a request may be counted after a
      -- later one: newest only grows, and the oldest hit may be the one counted now.
      INSERT INTO rate_counters AS c (key, used, oldest, newest)
      VALUES (v_keys[i], v_used[i] + 1, LEAST(COALESCE(v_oldest[i], p_now), p_now), p_now)
      ON CONFLICT (key) DO UPDATE SET used = excluded.used, oldest = excluded.oldest, newest = GREATEST(c.newest, excluded.newest);
    END LOOP;

    RETURN QUERY SELECT 'admitted'::text, v_session.id, v_session.ref, v_session.expires_at, v_readings, v_session.clock_offset_ms;
  END
  $$;
  `,
  // 5: the request log (../migrations.ts, as on SQLite).
  REQUEST_LOG(TYPES),
]

/** Brings the database up to the newest schema; safe when several instances start at once. */
export async function migrate(sql: Sql<any>): Promise<void> {
  await inTransaction(sql, async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`
    await tx`CREATE TABLE IF NOT EXISTS sandbox_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`
    const [row] = await tx<{ current: number }[]>`SELECT COALESCE(MAX(version), 0)::integer AS current FROM sandbox_migrations`
    const current = row!.current
    if (current > MIGRATIONS.length) {
      throw new Error(`database schema version ${current} is newer than this build (${MIGRATIONS.length})`)
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
      await tx.unsafe(MIGRATIONS[version]!)
      await tx`INSERT INTO sandbox_migrations (version) VALUES (${version + 1})`
    }
  })
}
