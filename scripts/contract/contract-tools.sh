#!/usr/bin/env bash
# Installs the contract checks' Python tools, pinned in test/contract/requirements.txt, into a
# project-local virtual environment (.tools/contract-venv), from PyPI with pip. Does nothing when
# they are already there at those versions. Prints the environment's bin folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.tools/contract-venv
requirements=test/contract/requirements.txt
stamp="$venv/requirements.txt"
if [ ! -x "$venv/bin/python" ]; then
  if ! python3 -m venv "$venv" >/dev/null 2>&1; then
    rm -rf "$venv"
    echo "contract-tools: python3 cannot create a virtual environment; install the venv module (Debian: apt-get install python3-venv)" >&2
    exit 1
  fi
fi
if ! cmp -s "$requirements" "$stamp"; then
  echo "contract-tools: installing $(grep -v '^#' "$requirements" | xargs) into $venv" >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements" >&2
  cp "$requirements" "$stamp"
fi
echo "$PWD/$venv/bin"
