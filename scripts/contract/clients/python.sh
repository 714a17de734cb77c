# openapi-generator `python`: generates the client package (trellis_client) into the scratch folder,
# with its runtime pinned in a virtual environment of its own under .tools, and lints the
# walk-through (sourced by scripts/contract/generated-clients.sh; `build` then `run`).
python_venv="$tools/python-client-venv"

build_python() { # <scratch>
  local requirements=test/clients/python/requirements.txt
  if [ ! -x "$python_venv/bin/python" ]; then
    python3 -m venv "$python_venv" || {
      rm -rf "$python_venv"
      echo "generated-clients: python3 cannot create a virtual environment (Debian: apt-get install python3-venv)" >&2
      return 1
    }
  fi
  if ! cmp -s "$requirements" "$python_venv/requirements.txt"; then
    echo "generated-clients: installing $requirements into $python_venv" >&2
    "$python_venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$python_venv/requirements.txt"
  fi
  echo "--- Python: openapi-generator $openapi_generator_version"
  "$python_venv/bin/ruff" check test/clients/python
  "$python_venv/bin/ruff" format --check test/clients/python
  openapi_generator generate -g python -i generated/openapi.yaml -o "$1/python" \
    --package-name trellis_client >"$1/python.log" || { cat "$1/python.log"; return 1; }
  PYTHONPATH="$1/python" "$python_venv/bin/python" -c 'import trellis_client'
}

run_python() { # <scratch>
  PYTHONPATH="$1/python" "$python_venv/bin/python" test/clients/python/walkthrough.py
}
