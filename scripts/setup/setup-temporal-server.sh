#!/usr/bin/env bash
# Makes the Temporal server, its SQL tool and its image's configuration template available for a real cluster on PostgreSQL (the
# topology test on a cluster, `npm run bench -- --temporal=cluster`; test/support/temporal-cluster.ts):
# builds the pinned release with `go install` from the Go module proxy into .tools/temporal-server
# (a few minutes the first time; kept after that). Its Go is newer than many machines have:
# GOTOOLCHAIN makes the go command fetch that toolchain from the same proxy.
#
#   bash scripts/setup/setup-temporal-server.sh     prints the folder holding both binaries
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v1.32.2
toolchain=go1.27.3
folder="$PWD/.tools/temporal-server"

if [ -x "$folder/temporal-server" ] && [ -x "$folder/temporal-sql-tool" ] &&
  [ -f "$folder/config/docker.yaml" ] && [ "$(cat "$folder/version" 2>/dev/null)" = "$version" ]; then
  echo "$folder"
  exit 0
fi
PATH="$PATH:/usr/local/go/bin"
if ! command -v go >/dev/null 2>&1; then
  echo "setup-temporal-server: Go is needed to build the Temporal server $version (https://go.dev/doc/install)" >&2
  exit 1
fi
echo "setup-temporal-server: building the Temporal server $version and its SQL tool into $folder" >&2
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export GOTOOLCHAIN="$toolchain" GOBIN="$scratch"
started=$SECONDS
go install "go.temporal.io/server/cmd/server@$version" >&2
go install "go.temporal.io/server/cmd/tools/sql@$version" >&2
mkdir -p "$folder"
mv "$scratch/server" "$folder/temporal-server"
mv "$scratch/sql" "$folder/temporal-sql-tool"
# The configuration template the release's image runs with (its /etc/temporal/config/docker.yaml),
# filled in from the environment: the cluster is configured as deploy/compose.yaml's temporal.
mkdir -p "$folder/config"
cp "$(go env GOMODCACHE)/go.temporal.io/server@$version/config/docker.yaml" "$folder/config/docker.yaml"
chmod u+w "$folder/config/docker.yaml"
echo "$version" >"$folder/version"
echo "setup-temporal-server: built in $((SECONDS - started)) s" >&2
echo "$folder"
