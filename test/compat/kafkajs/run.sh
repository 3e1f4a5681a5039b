#!/usr/bin/env bash
# KafkaJS compatibility suite: installs the pinned packages (package-lock.json)
# with npm's cache under $COMPAT_CACHE, then runs compat.js against
# $SAMSA_BOOTSTRAP. See test/compat/README.md.
set -euo pipefail
cd "$(dirname "$0")"
: "${SAMSA_BOOTSTRAP:?}" "${COMPAT_RESULTS:?}"
export COMPAT_CACHE=${COMPAT_CACHE:-$HOME/.cache/samsa-compat}
mkdir -p "$COMPAT_CACHE/npm"

# npm ci wipes node_modules; skip it when the installed tree matches the lock.
stamp=node_modules/.samsa-compat-lock
if [ ! -f "$stamp" ] || ! cmp -s package-lock.json "$stamp"; then
  npm ci --cache "$COMPAT_CACHE/npm" --prefer-offline --no-audit --no-fund --loglevel=error
  cp package-lock.json "$stamp"
fi

exec node compat.js
