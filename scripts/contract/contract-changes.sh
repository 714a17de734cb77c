#!/usr/bin/env bash
# The contract's changelog since the last release, and its gate: prints what changed between the
# newest document under spec/releases/ and generated/openapi.json (oasdiff, pinned; built with
# `go install` into .tools/go-bin), and fails on a breaking change that
# spec/releases/approved-changes.txt does not list. Before trusting a clean result it checks that
# oasdiff does flag a change known to break (the release without one of its operations).
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v1.37.0
bin=.tools/go-bin
oasdiff="$bin/oasdiff"
stamp="$bin/oasdiff.version"
if [ ! -x "$oasdiff" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$version" ]; then
  if ! command -v go >/dev/null; then
    echo "contract-changes: Go is needed to install oasdiff $version (https://go.dev/doc/install)" >&2
    exit 1
  fi
  echo "contract-changes: installing oasdiff $version into $bin" >&2
  GOBIN="$PWD/$bin" go install "github.com/oasdiff/oasdiff@$version"
  echo "$version" >"$stamp"
fi

release="$(ls spec/releases/*.json | sort -V | tail -1)"
current=generated/openapi.json
approved=spec/releases/approved-changes.txt

canary="$(mktemp --suffix=.json)"
trap 'rm -f "$canary"' EXIT
node -e '
  const fs = require("node:fs");
  const doc = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
  delete doc.paths[Object.keys(doc.paths).sort()[0]];
  fs.writeFileSync(process.argv[2], JSON.stringify(doc));
' "$release" "$canary"
if "$oasdiff" breaking "$release" "$canary" --fail-on ERR --format singleline >/dev/null; then
  echo "contract-changes: oasdiff found no break in a document without one of its paths; the check cannot be trusted" >&2
  exit 1
fi

echo "Contract changes since $(basename "$release" .json):"
"$oasdiff" changelog "$release" "$current" --format text --color never
if ! "$oasdiff" breaking "$release" "$current" --fail-on ERR --err-ignore "$approved" \
  --format text --color never; then
  echo "contract-changes: the contract breaks clients of $(basename "$release" .json) (above)." >&2
  echo "Make the change compatible, or list each line in $approved with the reason it is approved." >&2
  exit 1
fi
echo "No unapproved breaking change since $(basename "$release" .json)."
