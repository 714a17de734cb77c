#!/usr/bin/env bash
# The full test suite: unit tests, then integration tests against a real PostgreSQL and a real
# Temporal dev server that test/global-setup.ts starts (and installs the CLI for, if needed).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/setup/setup-temporal.sh >/dev/null
exec npx vitest run "$@"
