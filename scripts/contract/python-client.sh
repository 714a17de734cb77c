#!/usr/bin/env bash
# A second, independent client of the contract: generates a Python client from
# generated/openapi.yaml with openapi-python-client (refusing any warning: every operation and
# schema must come through), then runs the README's walk-through with it against a real Trellis
# (test/contract/walkthrough.py). Fails on any problem.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="$(bash scripts/contract/contract-tools.sh)"
export PATH="$bin:$PATH"
# The contract checks' own Python, linted and formatted as the TypeScript is.
ruff check test/contract && ruff format --check test/contract
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
openapi-python-client generate --path generated/openapi.yaml --output-path "$scratch/client" \
  --meta none --fail-on-warning
# With `--meta none` the output folder is the package itself (trellis_client).
mkdir -p "$scratch/site" && mv "$scratch/client" "$scratch/site/trellis_client"
export PYTHONPATH="$scratch/site"
node --import tsx scripts/dev/with-trellis.ts -- python test/contract/walkthrough.py
