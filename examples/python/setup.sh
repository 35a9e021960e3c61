#!/usr/bin/env bash
# Install the example Python agent's pinned dependencies (requirements.txt) into a venv:
#   ${PYTHON_AGENT_VENV:-${CARGO_TARGET_DIR:-<repo>/target}/python-agent}
# Quick no-op when that venv already has them (same requirements, same Python). PYTHON picks
# the interpreter (default python3, 3.9 or later). .ci/run calls this before the tests; the
# end-to-end test tests/python_agent.rs runs the agent with this venv's python.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$repo/target}
case $target in /*) ;; *) target=$repo/$target ;; esac
venv=${PYTHON_AGENT_VENV:-$target/python-agent}
python=${PYTHON:-python3}

if ! "$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; then
    echo "setup.sh: $python is missing, older than 3.9, or has no venv module" >&2
    exit 1
fi
# What the venv must have been made from; kept in it once the install succeeded.
want="$("$python" -c 'import sys; print(sys.version.split()[0], sys.executable)')
$(cat "$here/requirements.txt")"
stamp=$venv/.casino-ledger-requirements
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] &&
    "$venv/bin/python" -c 'import grpc, grpc_tools.protoc, google.protobuf, cryptography' 2>/dev/null; then
    echo "python agent: dependencies already installed in $venv"
    exit 0
fi
echo "python agent: installing requirements.txt into $venv"
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    -r "$here/requirements.txt"
printf '%s\n' "$want" > "$stamp"
echo "python agent: installed ($("$venv/bin/python" -m pip freeze --disable-pip-version-check | tr '\n' ' '))"
