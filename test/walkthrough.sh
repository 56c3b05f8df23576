#!/usr/bin/env bash
# The README's "Walk-through with curl", line for line (test/http/openapi-tools.spec.ts checks that
# the README shows exactly the lines below `set`, and runs this file against a server of its own).
# Needs curl and Node (which the README's quick start needs anyway); SANDBOX is the base address.
set -euo pipefail

SANDBOX=${SANDBOX:-http://localhost:3000}
day() { node -p "new Date(Date.now() + $1 * 864e5).toISOString().slice(0, 10)"; }
field() { node -pe "JSON.parse(require('fs').readFileSync(0, 'utf8')).$1"; }
TRIP="{\"origin_country\":\"IN\",\"destination_country\":\"FR\",\"start_date\":\"$(day 5)\",\"end_date\":\"$(day 15)\"}"

# 1. Open a fresh session; the cookie jar carries its cookie (sbx_session, HttpOnly) to later calls.
#    Its answer's data.console_url is a page of what the session does: open it in a browser.
curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/session"; echo

# 2. Search plans for the trip and traveller ages; keep the first plan_id.
PLAN_ID=$(curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/plans/search" \
  -H 'Content-Type: application/json' \
  -d "{\"trip\":$TRIP,\"travellers\":[{\"age\":34},{\"age\":8}],\"currency\":\"EUR\"}" | field 'data.plans[0].plan_id')
echo "plan_id: $PLAN_ID"

# 3. Issue a policy against it, with the same trip and ages (in any order); keep the policy_ref.
POLICY_REF=$(curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/policy/new" \
  -H 'Content-Type: application/json' -H 'Idempotency-Key: booking-1234' \
  -d "{\"plan_id\":\"$PLAN_ID\",\"trip\":$TRIP,\"travellers\":[{\"age\":8},{\"age\":34}],\"partner_reference\":\"BK-1234\"}" \
  | field 'data.policy_ref')
echo "policy_ref: $POLICY_REF"

# 4. Apply a correction scenario: extend the trip by five days.
curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/policy/$POLICY_REF/modify" \
  -H 'Content-Type: application/json' \
  -d "{\"scenario\":\"extend_end_date\",\"new_end_date\":\"$(day 20)\"}"; echo

# 5. Read the policy back: as it stands, with every endorsement (old and new value, premium change).
curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/policy/$POLICY_REF/read"; echo

# 6. Download its certificate: a specimen PDF (SPECIMEN — SANDBOX — NOT INSURANCE on every page).
curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/policy/$POLICY_REF/documents/policy_certificate" -o certificate.pdf
echo "certificate: $(wc -c < certificate.pdf) bytes"

# 7. Rehearse a failure your integration must survive: the insurer is down (503, Retry-After).
curl -s -i -c jar -b jar -X POST "$SANDBOX/api/sandbox/policy/$POLICY_REF/modify" -H 'Sandbox-Outcome: upstream_unavailable' \
  -H 'Content-Type: application/json' -d "{\"scenario\":\"extend_end_date\",\"new_end_date\":\"$(day 21)\"}"; echo

# 8. Rehearse the trip itself: move this session's clock 10 days on, into the trip (a test helper; the
#    session's expiry and fair use stay on real time). Cover starts on the way: policy.started.
curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/test_helpers/clock/advance" -H 'Content-Type: application/json' -d '{"days":10}'; echo

# 9. Cancel it: first the refund it would get (pro rata now; nothing changes), then for real.
curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/policy/$POLICY_REF/cancel" -H 'Content-Type: application/json' -d '{"preview":true}'; echo
curl -s -c jar -b jar -X POST "$SANDBOX/api/sandbox/policy/$POLICY_REF/cancel" -H 'Idempotency-Key: cancel-1234'; echo
