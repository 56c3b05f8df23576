-- wrk script for bench/run.ts. One connection per wrk thread (`-t N -c N`), so each thread is one
-- partner: its own X-Forwarded-For network (from a counter in setup()) and its own session cookie
-- (captured from `set-cookie` in response(), sent back in request()).
--
-- Environment (set by bench/run.ts):
--   BENCH_MODE   search | issue | modify | limited
--                search:  loops on plan search
--                issue:   one search, then loops on policy issue of its first plan
--                modify:  one search, one issue, then loops on modify, alternating
--                         extend_end_date (to BENCH_END2) and shorten_end_date (back to BENCH_END);
--                         after 20 corrections it issues a new policy (one request in 21): every
--                         answer and event of a policy carries its whole history, so one policy
--                         corrected thousands of times would measure that history, not a correction
--                limited: plan search from ONE network and no cookie: the allowance is spent after
--                         the first few requests and the rest measure the 429 path
--   BENCH_START, BENCH_END, BENCH_END2   trip dates (YYYY-MM-DD, relative to today; BENCH_END2 > BENCH_END)
--   BENCH_NET    second octet of the 10.x.y.z networks (distinct per wrk run, so counters start empty)
--
-- done() prints one line `BENCH_JSON {...}` with the figures and the status counts per class.

local mode = os.getenv("BENCH_MODE") or "search"
local start_date = os.getenv("BENCH_START")
local end_date = os.getenv("BENCH_END")
local end_date2 = os.getenv("BENCH_END2")
local net = tonumber(os.getenv("BENCH_NET") or "1")

local trip = string.format(
  '{"origin_country":"IN","destination_country":"FR","start_date":"%s","end_date":"%s"}', start_date, end_date)
local travellers = '[{"age":34},{"age":8}]'
local search_body = string.format('{"trip":%s,"travellers":%s,"currency":"EUR"}', trip, travellers)

-- main Lua state: hand each thread its id, keep the threads for done()
local counter = 0
local threads = {}

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end

-- per-thread state (each wrk thread has its own Lua state)
local cookie = nil
local xff = nil
local phase = "search"      -- search -> issue -> modify
local plan_id = nil
local policy_ref = nil
local extend_next = true
local modifies = 0
local MODIFIES_PER_POLICY = 20
n2xx, n429, nother, nsetup = 0, 0, 0, 0
first_bad = ""

function init(args)
  if mode == "limited" then
    xff = string.format("10.%d.255.254", net)
  else
    xff = string.format("10.%d.%d.%d", net, math.floor(id / 250), id % 250 + 1)
  end
  if mode == "issue" or mode == "modify" then phase = "search" else phase = mode end
end

local function headers()
  local h = { ["Content-Type"] = "application/json", ["X-Forwarded-For"] = xff }
  if cookie then h["Cookie"] = cookie end
  return h
end

function request()
  if phase == "issue" then
    return wrk.format("POST", "/api/sandbox/policy/new", headers(),
      string.format('{"plan_id":"%s","trip":%s,"travellers":%s}', plan_id, trip, travellers))
  elseif phase == "modify" then
    local body
    if extend_next then
      body = string.format('{"scenario":"extend_end_date","new_end_date":"%s"}', end_date2)
    else
      body = string.format('{"scenario":"shorten_end_date","new_end_date":"%s"}', end_date)
    end
    return wrk.format("POST", "/api/sandbox/policy/" .. policy_ref .. "/modify", headers(), body)
  end
  return wrk.format("POST", "/api/sandbox/plans/search", headers(), search_body)
end

function response(status, hdrs, body)
  if mode ~= "limited" then
    for name, value in pairs(hdrs) do
      if string.lower(name) == "set-cookie" then
        cookie = string.match(value, "^([^;]+)")
      end
    end
  end
  local ok = status >= 200 and status < 300
  if ok then n2xx = n2xx + 1 elseif status == 429 then n429 = n429 + 1 else nother = nother + 1 end
  if not ok and first_bad == "" and not (mode == "limited" and status == 429) then
    first_bad = status .. " " .. string.sub(body or "", 1, 200)
  end
  -- the set-up steps of issue and modify: advance only on success, else retry the same step
  if phase == "search" and (mode == "issue" or mode == "modify") then
    nsetup = nsetup + 1
    if ok then
      plan_id = string.match(body, '"plan_id":"([^"]+)"')
      if plan_id then phase = "issue" end
    end
  elseif phase == "issue" and mode == "modify" then
    nsetup = nsetup + 1
    if ok then
      policy_ref = string.match(body, '"policy_ref":"([^"]+)"')
      if policy_ref then
        phase = "modify"
        modifies = 0
      end
    end
  elseif phase == "modify" and ok then
    extend_next = not extend_next
    modifies = modifies + 1
    if modifies >= MODIFIES_PER_POLICY and extend_next then phase = "issue" end
  end
end

local function escape(s)
  return (string.gsub(s, '[%c"\\]', function(c) return string.format("\\u%04x", string.byte(c)) end))
end

function done(summary, latency, requests)
  local t2xx, t429, tother, tsetup, bad = 0, 0, 0, 0, ""
  for _, thread in ipairs(threads) do
    t2xx = t2xx + (thread:get("n2xx") or 0)
    t429 = t429 + (thread:get("n429") or 0)
    tother = tother + (thread:get("nother") or 0)
    tsetup = tsetup + (thread:get("nsetup") or 0)
    local b = thread:get("first_bad") or ""
    if bad == "" then bad = b end
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,'
      .. '"mean_us":%.1f,"n2xx":%d,"n429":%d,"nother":%d,"nsetup":%d,"socket_errors":%d,"timeouts":%d,"first_bad":"%s"}\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, latency.mean, t2xx, t429, tother, tsetup,
    e.connect + e.read + e.write, e.timeout, escape(bad)))
end
