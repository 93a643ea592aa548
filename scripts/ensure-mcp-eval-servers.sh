#!/usr/bin/env bash
# Makes the two Python MCP servers of the eval's `servers` catalog available (scripts/eval/scripted/
# catalogs.json): PyPI's mcp-server-time and mcp-server-git, pinned, in one venv under .tools/ (they
# work offline: time conversion, and git on a local repository). Prints the venv's bin folder (the
# catalog's $PY_BIN). Idempotent: a second run reuses what the first installed.
#
#   bash scripts/ensure-mcp-eval-servers.sh          # prints "MCP eval servers: <bin folder>"
#   bash scripts/ensure-mcp-eval-servers.sh --path   # prints only the folder
#   bash scripts/ensure-mcp-eval-servers.sh --quiet  # silent on success
set -euo pipefail

TIME_VERSION="2026.10.19"
GIT_VERSION="2026.10.19"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.tools/mcp-eval-servers"
log="$root/.tools/mcp-eval-servers-install.log"
mode="${1:-}"

works() { [ -x "$venv/bin/mcp-server-time" ] && [ -x "$venv/bin/mcp-server-git" ] && "$venv/bin/python" -c 'import mcp_server_time, mcp_server_git' 2>/dev/null; }

report() {
  case "$mode" in
    --path) printf '%s\n' "$venv/bin" ;;
    --quiet) ;;
    *) printf 'MCP eval servers: %s\n' "$venv/bin" ;;
  esac
  exit 0
}

works && report
mkdir -p "$(dirname "$log")"
python="$(command -v python3 || command -v python || true)"
if [ -n "$python" ] && "$python" -m venv "$venv" >"$log" 2>&1 &&
  "$venv/bin/python" -m pip install --disable-pip-version-check -q "mcp-server-time==$TIME_VERSION" "mcp-server-git==$GIT_VERSION" >>"$log" 2>&1 && works; then
  report
fi
echo "Could not install the eval's MCP servers (details: $log). Install Python 3 with venv and pip, then run: bash scripts/ensure-mcp-eval-servers.sh" >&2
exit 1
