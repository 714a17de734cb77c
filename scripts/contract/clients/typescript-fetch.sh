# openapi-generator `typescript-fetch`: generates the client into a scratch folder beside a copy of
# the walk-through (test/clients/typescript-fetch), compiles both with the repository's own
# TypeScript, strict, and runs the walk-through on Node's fetch (sourced by
# scripts/contract/generated-clients.sh; `build` then `run`).

build_typescript_fetch() { # <scratch>
  echo "--- TypeScript: openapi-generator $openapi_generator_version typescript-fetch"
  local folder="$1/typescript-fetch"
  openapi_generator generate -g typescript-fetch -i generated/openapi.yaml -o "$folder/trellis" >/dev/null
  cp test/clients/typescript-fetch/walkthrough.ts "$folder/"
  # CommonJS: the generated modules import each other without file extensions.
  node_modules/.bin/tsc --strict --noUncheckedIndexedAccess --target es2022 --module commonjs \
    --moduleResolution node10 --lib es2022,dom --skipLibCheck \
    --types node --typeRoots "$PWD/node_modules/@types" --outDir "$folder/dist" "$folder/walkthrough.ts"
}

run_typescript_fetch() { # <scratch>
  node "$1/typescript-fetch/dist/walkthrough.js"
}
