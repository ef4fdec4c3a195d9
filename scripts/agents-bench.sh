#!/usr/bin/env bash
# Side-by-side agent benchmark (issue 13): the same six scripted agent tasks
# through livetab mcp, @playwright/mcp 0.0.83 and chrome-devtools-mcp 1.11.0,
# all on the system Chromium, headless, against local pages on 127.0.0.1.
# Prints a Markdown table: calls, wall time, characters of the results'
# text, success as the local server saw it.
#
# Not run in CI (it installs the two anchors from npm and takes a minute or
# two). Run it by hand from the repository root:
#
#   scripts/agents-bench.sh [--only livetab,playwright,devtools] [--verbose]
#
# Needs Go, Node 20+, npm and Chromium (LIVETAB_CHROME, else /usr/bin/chromium).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)/livetab
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./cmd/livetab
cd bench/agents
# Exactly the versions in package-lock.json; no browser downloads: every
# server uses the system Chromium.
PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2
node run.mjs --livetab "$bin" --chromium "${LIVETAB_CHROME:-/usr/bin/chromium}" "$@"
