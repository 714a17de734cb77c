#!/usr/bin/env bash
# Makes Helm available for linting and rendering deploy/helm/trellis (test/deploy/helm.test.ts):
# HELM, then `helm` on PATH, then .tools/helm, else builds the pinned version there with
# `go install` from the Go module proxy (a few minutes the first time; cached after that).
# Arguments, if any, are then run as a helm command:
#
#   bash scripts/setup/setup-helm.sh lint --strict deploy/helm/trellis -f deploy/helm/trellis/ci/lint-values.yaml
set -euo pipefail
cd "$(dirname "$0")/../.."
version=v3.22.0
# What Helm's own Makefile stamps into a release build: its version, and the Kubernetes version
# of its client libraries (k8s.io/* v0.37 → 1.37), which `helm template` and `helm lint` assume.
kube_minor=37
ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$version"
for package in pkg/lint/rules pkg/chartutil; do
  ldflags+=" -X helm.sh/helm/v3/$package.k8sVersionMajor=1 -X helm.sh/helm/v3/$package.k8sVersionMinor=$kube_minor"
done

find_helm() {
  if [ -n "${HELM:-}" ] && [ -x "$HELM" ]; then helm="$HELM" source="HELM"; return; fi
  if command -v helm >/dev/null 2>&1; then helm="$(command -v helm)" source="PATH"; return; fi
  helm=.tools/helm/bin/helm source=".tools"
  if [ -x "$helm" ] && [ "$("$helm" version --short 2>/dev/null)" = "$version" ]; then return; fi
  # Go's official install location, for shells whose PATH lacks it.
  PATH="$PATH:/usr/local/go/bin"
  if ! command -v go >/dev/null 2>&1; then
    echo "Helm is not installed and Go is not there to build it: install Helm $version, or Go" >&2
    exit 1
  fi
  echo "Building Helm $version with go install into .tools/helm" >&2
  GOBIN="$PWD/.tools/helm/bin" CGO_ENABLED=0 go install -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$version"
}

find_helm
echo "Helm: $helm ($source, $("$helm" version --short))" >&2
if [ "$#" -gt 0 ]; then exec "$helm" "$@"; fi
