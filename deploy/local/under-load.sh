#!/usr/bin/env bash
# under-load.sh [COMMAND...]: runs COMMAND (default: npm test) beside two CPU-bound processes, as
# on a busy CI machine, and prints how long it took. The hogs stop with it, however it ends.
# `bash deploy/local/under-load.sh bash .ci/run` is the check of docs/testing.md.
set -uo pipefail
cd "$(dirname "$0")/../.."
hogs=()
for _ in 1 2; do
  node -e 'for (;;);' &
  hogs+=($!)
done
trap 'kill "${hogs[@]}" 2> /dev/null' EXIT
echo "under-load: ${#hogs[@]} CPU-bound processes (${hogs[*]}) beside: ${*:-npm test}"
started=$SECONDS
if [ $# -eq 0 ]; then set -- npm test; fi
"$@"
code=$?
echo "under-load: '$*' exited $code after $((SECONDS - started)) s"
exit $code
