#!/usr/bin/env bash
# Runs the quick-start demo on a fresh machine: installs Chromium when it is
# missing, then launches it headless with the livetab extension and drives a
# local page through chromedp.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! { [ -x /usr/lib/chromium/chromium ] || command -v chromium >/dev/null 2>&1 || command -v google-chrome >/dev/null 2>&1; }; then
  if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi
exec go run ./examples/quickstart
