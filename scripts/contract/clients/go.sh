# oapi-codegen (Go): generates the client into a scratch copy of test/clients/go and builds the
# walk-through (sourced by scripts/contract/generated-clients.sh; `build` then `run`).
oapi_codegen_version=v2.8.2

build_go() { # <scratch>
  install_go_tool oapi-codegen github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen "$oapi_codegen_version"
  echo "--- Go: oapi-codegen $oapi_codegen_version"
  local unformatted
  unformatted="$(gofmt -l test/clients/go)"
  if [ -n "$unformatted" ]; then
    echo "generated-clients: run gofmt -w on: $unformatted" >&2
    return 1
  fi
  cp -r test/clients/go "$1/go"
  mkdir -p "$1/go/trellis"
  "$tools/go-bin/oapi-codegen" -generate types,client -package trellis \
    -o "$1/go/trellis/client.gen.go" generated/openapi.yaml
  (cd "$1/go" && go vet ./... && go build -o walkthrough .)
}

run_go() { # <scratch>
  "$1/go/walkthrough"
}
