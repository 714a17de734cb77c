#!/usr/bin/env bash
# Schemathesis over every operation of the contract, against a real Trellis: all checks, all
# phases, a fixed seed, configured by schemathesis.toml (with the hooks in
# test/contract/schemathesis_hooks.py). Fails on any failure. Extra arguments go to `st run`
# (e.g. `--max-time 30` for a quick local run).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="$(bash scripts/contract/contract-tools.sh)"
export PATH="$bin:$PATH"
echo "Schemathesis $(st --version | awk '{print $NF}'), configuration: schemathesis.toml"
# Schemathesis closes with a pytest-style banner ("=== 1 warning in 150.03s ==="), which tools
# reading CI's log take for the summary of the whole run's tests (none passed: "no test ran").
# The same words stay, without the banner; the summary above them says what was tested.
node --import tsx scripts/dev/with-trellis.ts -- \
  sh -c 'exec st run "$TRELLIS_URL/openapi.json" "$@"' st "$@" |
  sed -u -E 's/^=+ (.+ in [0-9.]+s) =+$/Schemathesis: \1/'
