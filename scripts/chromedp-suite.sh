#!/usr/bin/env bash
# Runs chromedp's own test suite (the version in go.mod) against livetab, in
# process and through the CDP endpoint of livetab serve, and compares the
# failures with internal/chromedpsuite/expected-failures.txt. Extra
# arguments go to the runner, e.g.:
#   scripts/chromedp-suite.sh -suite.run '^TestRunResponse$' -suite.backends inproc
# (see internal/chromedpsuite/README.md for all of them).
set -euo pipefail
cd "$(dirname "$0")/.."
export LIVETAB_CHROMEDP_SUITE=1
exec go test -count=1 -timeout 20m -run '^TestChromedpSuite$' -v ./internal/chromedpsuite -args "$@"
