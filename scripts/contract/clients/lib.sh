# Shared by scripts/contract/clients/*.sh (sourced, not run): the pinned generators, installed into
# .tools on first use, and the scratch folder each client is generated into.

tools="$PWD/.tools"

# install_go_tool <name> <module path> <version>: `go install` into .tools/go-bin, once per version.
install_go_tool() {
  local bin="$tools/go-bin"
  if ! command -v go >/dev/null; then
    echo "generated-clients: Go is needed (https://go.dev/doc/install)" >&2
    return 1
  fi
  if [ ! -x "$bin/$1" ] || [ "$(cat "$bin/$1.version" 2>/dev/null)" != "$3" ]; then
    echo "generated-clients: installing $1 $3 into $bin" >&2
    GOBIN="$bin" go install "$2@$3"
    echo "$3" >"$bin/$1.version"
  fi
}

# openapi_generator <args...>: openapi-generator's CLI jar, pinned, from Maven Central.
openapi_generator_version=7.25.0
openapi_generator() {
  local dir="$tools/openapi-generator"
  local jar="$dir/openapi-generator-cli-$openapi_generator_version.jar"
  if ! command -v java >/dev/null || ! command -v mvn >/dev/null; then
    echo "generated-clients: Java 11+ and Maven are needed (apt-get install default-jdk-headless maven)" >&2
    return 1
  fi
  if [ ! -f "$jar" ]; then
    echo "generated-clients: fetching openapi-generator-cli $openapi_generator_version into $dir" >&2
    mvn -q dependency:copy -Dartifact="org.openapitools:openapi-generator-cli:$openapi_generator_version" \
      -DoutputDirectory="$dir"
  fi
  java -jar "$jar" "$@"
}
