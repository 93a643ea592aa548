#!/usr/bin/env bash
# Makes openapi-generator available (for tests/openapi-generators.test.ts, which checks that the
# OpenAPI document generates clients that build) and prints which one. Needs Java 11+.
# Order: $OPENAPI_GENERATOR_CLI, then `openapi-generator-cli` on PATH, then PyPI's
# openapi-generator-cli wheel (it bundles the official jar) in a venv under .tools/.
# Idempotent: a second run reuses what the first installed.
#
#   bash scripts/ensure-openapi-generator.sh          # prints "openapi-generator: <path> (<version>)"
#   bash scripts/ensure-openapi-generator.sh --path   # prints only the path
set -euo pipefail

OPENAPI_GENERATOR_VERSION="7.26.0"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.tools/openapi-generator"
mode="${1:-}"

works() { [ -n "$1" ] && [ -x "$1" ] && "$1" version >/dev/null 2>&1; }

label='openapi-generator'
version_of() { "$1" version 2>/dev/null | tail -n 1; }

alternatives() {
  cat >&2 <<MSG
Any one of these works:
  - install Java 11+ and Python 3 with venv and pip, then run: npm run openapi-generator:install,
  - or install openapi-generator-cli (npm, brew or the official jar wrapper) and set
    OPENAPI_GENERATOR_CLI=/path/to/openapi-generator-cli.
MSG
}

# shellcheck source=lib/ensure-pip-binary.sh
source "$root/scripts/lib/ensure-pip-binary.sh"
ensure_pip_binary "openapi-generator" OPENAPI_GENERATOR_CLI openapi-generator-cli "$venv" "openapi-generator-cli==$OPENAPI_GENERATOR_VERSION" "$root/.tools/openapi-generator-install.log"
