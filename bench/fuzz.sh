#!/usr/bin/env bash
# Fuzz a real `naturali serve` from its own OpenAPI with schemathesis, bounded in time, and
# report server errors (5xx) and responses that break the schema.
#   bash bench/fuzz.sh [SECONDS=300] [EXAMPLES_PER_OPERATION=100]
# Exits non-zero if schemathesis found a failure or the server logged an unhandled error.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-300}
examples=${2:-100}
py=.venv/bin/python
work=$(mktemp -d)
token=$($py -c 'import secrets; print("nk_fuzz_" + secrets.token_urlsafe(32))')
port=$($py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
NATURALI_BOOTSTRAP_TOKEN=$token NATURALI_DATA_DIR=$work/data \
  .venv/bin/naturali serve --demo --port "$port" >"$work/server.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -rf "$work"' EXIT
$py - "$port" <<'PY'
import sys, time, httpx
for _ in range(240):
    try:
        if httpx.get(f"http://127.0.0.1:{sys.argv[1]}/healthz", timeout=1).status_code == 200:
            break
    except httpx.HTTPError:
        time.sleep(0.5)
PY
mkdir -p bench/results
status=0
.venv/bin/schemathesis run "http://127.0.0.1:$port/openapi.json" \
  -H "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --max-time "$seconds" --max-examples "$examples" --seed 1 \
  --report junit --report-junit-path bench/results/fuzz-junit.xml \
  --warnings off || status=$?
errors=$(grep -c "unhandled error" "$work/server.log" || true)
requests=$(grep -c "INFO: .* /v1/" "$work/server.log" || true)
echo "fuzz: $requests requests answered, $errors unhandled server errors, schemathesis exit $status"
[ "$status" -eq 0 ] && [ "$errors" -eq 0 ]
