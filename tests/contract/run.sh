#!/usr/bin/env bash
# The API document's contract test: Schemathesis generates requests from the server's own
# /api/v1/openapi.json (examples, boundary cases, then random ones) and sends them to a real
# server as the demo owner; it fails on any 5xx, and on any answer whose status, content type
# or body the document does not describe, or an invalid request the server accepted. The seed
# is fixed so a run can be repeated exactly (`st replay` names each failing case). One worker:
# with two threads, CPython 3.11's `ast.parse` (Hypothesis describing a strategy) once failed
# with "AST constructor recursion depth mismatch" — a race in the interpreter, not a finding.
set -euo pipefail
cd "$(dirname "$0")/../.."

venv=target/contract-venv
if [ ! -x "$venv/bin/schemathesis" ] || ! cmp -s tests/contract/requirements.txt "$venv/requirements.txt"; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/contract/requirements.txt
    cp tests/contract/requirements.txt "$venv/requirements.txt"
fi

cargo build --quiet --bin docsync
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
DOCSYNC_LOGGING__LEVEL=warn target/debug/docsync serve --demo --bind "127.0.0.1:$port" \
    --data "$dir/docsync.db" > "$dir/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/readyz" > /dev/null && break
    sleep 0.1
done
token=$(sed -n 's/^ *alice .*API token: \(ds[a-z]_[0-9a-f]*\).*/\1/p' "$dir/server.log" | head -1)
[ -n "$token" ] || { echo "no demo token in:"; cat "$dir/server.log"; exit 1; }

"$venv/bin/schemathesis" run "http://127.0.0.1:$port/api/v1/openapi.json" \
    --header "Authorization: Bearer $token" \
    --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,negative_data_rejection \
    --phases examples,coverage,fuzzing \
    --max-examples 30 \
    --seed 20261205 \
    --workers 1 \
    --warnings off
