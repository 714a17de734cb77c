#!/usr/bin/env bash
# Clients that other people's generators make from generated/openapi.yaml, as generated (no patch),
# each running a walk-through against a real Trellis: oapi-codegen (Go, test/clients/go). The
# generators are pinned and installed here (`go install` into .tools/go-bin); each client is
# generated into a scratch copy of its walk-through, so nothing generated lands in the repository.
#
#   bash scripts/contract/generated-clients.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
oapi_codegen_version=v2.8.2
bin="$PWD/.tools/go-bin"

install_go_tool() { # <name> <module path> <version>
  if [ ! -x "$bin/$1" ] || [ "$(cat "$bin/$1.version" 2>/dev/null)" != "$3" ]; then
    echo "generated-clients: installing $1 $3 into $bin" >&2
    GOBIN="$bin" go install "$2@$3"
    echo "$3" >"$bin/$1.version"
  fi
}
if ! command -v go >/dev/null; then
  echo "generated-clients: Go is needed (https://go.dev/doc/install)" >&2
  exit 1
fi
install_go_tool oapi-codegen github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen "$oapi_codegen_version"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

echo "--- Go: oapi-codegen $oapi_codegen_version"
unformatted="$(gofmt -l test/clients/go)"
if [ -n "$unformatted" ]; then
  echo "generated-clients: run gofmt -w on: $unformatted" >&2
  exit 1
fi
cp -r test/clients/go "$scratch/go"
mkdir -p "$scratch/go/trellis"
"$bin/oapi-codegen" -generate types,client -package trellis \
  -o "$scratch/go/trellis/client.gen.go" generated/openapi.yaml
(cd "$scratch/go" && go vet ./... && go build -o walkthrough .)

node --import tsx scripts/dev/with-trellis.ts -- "$scratch/go/walkthrough"
