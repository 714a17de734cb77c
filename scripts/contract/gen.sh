#!/usr/bin/env bash
# Rebuilds everything generated from spec/ (npm run gen). Deterministic: running it twice leaves no
# diff, which scripts/contract/check-generated.sh relies on. Generated files are never edited by hand.
set -euo pipefail

cd "$(dirname "$0")/../.."
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Runs a step quietly; prints its output only when it fails.
quiet() {
  if ! "$@" >"$scratch/log" 2>&1; then
    cat "$scratch/log" >&2
    echo "gen: failed: $*" >&2
    exit 1
  fi
}

tsp() { node node_modules/@typespec/compiler/cmd/tsp.js "$@"; }

# 1. The HTTP API: spec/main.tsp -> generated/openapi.{json,yaml} (OpenAPI 3.1, see tspconfig.yaml),
#    a configuration's settings typed by the built-in plugins' manifests (plugins/*/plugin.json).
quiet tsp compile spec --warn-as-error \
  --option "@typespec/openapi3.emitter-output-dir=$scratch/openapi"
quiet node node_modules/tsx/dist/cli.mjs scripts/contract/finalize-openapi.ts "$scratch/openapi/openapi.json" generated plugins

# 2. The workflow definition format (spec/definition/, DEFINITION's): its one @jsonSchema root model
#    bundles every other model into $defs, so the emitter writes a single file.
if [[ -f spec/definition/main.tsp ]]; then
  quiet tsp compile spec/definition/main.tsp --warn-as-error \
    --emit @typespec/json-schema \
    --option "@typespec/json-schema.emitter-output-dir=$scratch/definition" \
    --option "@typespec/json-schema.file-type=json"
  emitted=("$scratch"/definition/*.json)
  if [[ ${#emitted[@]} -ne 1 ]]; then
    echo "gen: spec/definition must emit exactly one JSON Schema file, got: ${emitted[*]}" >&2
    exit 1
  fi
  cp "${emitted[0]}" generated/workflow-definition.schema.json
  # Its TypeScript types, from the same schema (core/src/definition/types.ts re-exports them).
  quiet node node_modules/tsx/dist/cli.mjs scripts/contract/definition-types.ts \
    generated/workflow-definition.schema.json generated/workflow-definition.d.ts
fi

# 3. TypeScript types of the built-in plugins' parameters and outputs, from their manifests
#    (plugins/*/plugin.json): the SDK types each built-in task's parameters with them.
quiet node node_modules/tsx/dist/cli.mjs scripts/contract/plugin-types.ts plugins generated/plugin-types.d.ts

# 4. TypeScript types of the API (server handlers, tests, the SDK: its build copies generated/*.d.ts
#    into its dist/, so the published package is self-contained).
quiet node node_modules/openapi-typescript/bin/cli.js generated/openapi.json -o generated/schema.d.ts
