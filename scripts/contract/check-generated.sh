#!/usr/bin/env bash
# Fails when the committed generated files differ from what `npm run gen` produces (CI runs it).
set -euo pipefail

cd "$(dirname "$0")/../.."
bash scripts/contract/gen.sh
drift="$(git status --porcelain -- generated)"
if [[ -n "$drift" ]]; then
  echo "Generated files are out of date; run 'npm run gen' and commit the result:" >&2
  echo "$drift" >&2
  git --no-pager diff --stat -- generated >&2
  exit 1
fi
echo "generated/ is up to date"
