#!/usr/bin/env bash
# `npm run test:stress`: the whole suite while a CPU hog keeps every core busy (stress-ng from Debian's
# package), to find the tests that only pass on an idle machine. The hog starts before the suite and is
# stopped however the suite ends. Deadlines in the tests are failure guards scaled by BDSH_TEST_TIME_SCALE
# (3 here unless set); extra arguments go to vitest (a file, -t NAME).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v stress-ng >/dev/null; then
  echo "test:stress needs stress-ng (apt-get install stress-ng)" >&2
  exit 2
fi
workers="${BDSH_STRESS_CPUS:-$(nproc)}"
stress-ng --cpu "$workers" --timeout 3h --quiet &
hog=$!
trap 'kill "$hog" 2>/dev/null || true; wait "$hog" 2>/dev/null || true' EXIT
export BDSH_TEST_TIME_SCALE="${BDSH_TEST_TIME_SCALE:-3}"
echo "test:stress: ${workers} busy CPU worker(s) (stress-ng pid ${hog}), time scale ${BDSH_TEST_TIME_SCALE}" >&2
start=$(date +%s)
status=0
npx vitest run "$@" || status=$?
echo "test:stress: vitest exited ${status} after $(($(date +%s) - start)) s under load" >&2
exit "$status"
