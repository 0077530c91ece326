#!/usr/bin/env bash
# Installs Debian's headless-capable Chromium for the HTML report's browser
# test (cmd/kapply TestHTMLReportInChromium), when it is missing and we are
# root; quick (one stat) when it is already there. Without root it only says
# how to install it: the test then skips outside CI and fails with CI=true.
set -euo pipefail
browser=${KAPPLY_CHROMIUM:-/usr/bin/chromium}
if [[ -x $browser ]]; then
	exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
	echo "chromium missing at $browser; install it with: sudo apt-get install -y chromium" >&2
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends chromium >/dev/null ||
	{ apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium >/dev/null; }
echo "installed $("$browser" --version 2>/dev/null || echo chromium)"
