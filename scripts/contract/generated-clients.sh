#!/usr/bin/env bash
# Clients that other people's generators make from generated/openapi.yaml, as generated (no patch),
# each running a walk-through against one real Trellis. Each generator is a file in
# scripts/contract/clients/ defining build_<name> (generate and compile into a scratch folder) and
# run_<name> (the walk-through; TRELLIS_URL, TRELLIS_USER and TRELLIS_PASSWORD are set). The
# generators are pinned and installed into .tools; nothing generated lands in the repository.
#
#   bash scripts/contract/generated-clients.sh [name...]     (default: every client)
set -euo pipefail
cd "$(dirname "$0")/../.."
clients=("$@")
if [ "${#clients[@]}" -eq 0 ]; then
  for file in scripts/contract/clients/*.sh; do
    [ "$(basename "$file")" = lib.sh ] || clients+=("$(basename "$file" .sh)")
  done
fi

source scripts/contract/clients/lib.sh
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for client in "${clients[@]}"; do
  source "scripts/contract/clients/$client.sh"
  "build_${client//-/_}" "$scratch"
done

# One Trellis for every walk-through; each names what it creates uniquely.
export GENERATED_CLIENTS="${clients[*]}" GENERATED_CLIENTS_SCRATCH="$scratch"
node --import tsx scripts/dev/with-trellis.ts -- bash -c '
  set -euo pipefail
  source scripts/contract/clients/lib.sh
  for client in $GENERATED_CLIENTS; do
    source "scripts/contract/clients/$client.sh"
    echo "--- walk-through: $client"
    "run_${client//-/_}" "$GENERATED_CLIENTS_SCRATCH"
  done'
