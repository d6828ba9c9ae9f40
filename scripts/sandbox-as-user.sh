#!/usr/bin/env bash
# The sandbox tests again as an unprivileged user (CI runs as root, where bwrap takes another
# path: a user namespace is made on purpose and every capability dropped). Run by .ci/run after
# the suite, when it runs as root and can add a user; the test binaries are those the suite
# built. Usage: scripts/sandbox-as-user.sh
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null 2>&1 || ! command -v runuser >/dev/null 2>&1; then
  echo "SKIPPED: the sandbox tests as an unprivileged user need root, useradd and runuser"
  exit 0
fi
user=skillet-sandbox-test
id "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$user"
home=$(getent passwd "$user" | cut -d: -f6)
# The test binaries, as cargo built them for the suite.
mapfile -t binaries < <(cargo test --locked -p skillet-cli --test sandbox_escapes --test sandbox_review -p skillet-agent --test containment --no-run --message-format=json 2>/dev/null \
  | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["executable"])')
if [ "${#binaries[@]}" -ne 3 ]; then
  echo "error: expected three test binaries, found: ${binaries[*]:-none}" >&2
  exit 1
fi
# The user reads the build and writes fixtures in the target dir's scratch folder.
mkdir -p target/tmp
chmod 1777 target/tmp
dir=$(pwd)
while [ "$dir" != / ]; do chmod o+x "$dir"; dir=$(dirname "$dir"); done
chmod -R o+rX target/debug
for binary in "${binaries[@]}"; do
  echo "== $(basename "$binary") as $user"
  runuser -u "$user" -- env -i HOME="$home" PATH="$PATH" SKILLET_REQUIRE_SANDBOX=1 \
    ${SKILLET_REQUIRE_TMUX:+SKILLET_REQUIRE_TMUX=1} "$binary" --test-threads 2
done
