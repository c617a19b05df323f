#!/usr/bin/env bash
# Install the pinned `claude` CLI (npm @anthropic-ai/claude-code) once into a cache folder,
# for the contract tests against the real CLI (tests/integration/test_claude_real.py).
#   scripts/install-claude-cli.sh [VERSION]   -> prints the path of the installed `claude`
# Cache: $OMEGA_CLAUDE_CLI_CACHE (default ~/.cache/omega/claude-cli)/<version>. Needs npm.
set -euo pipefail
VERSION="${1:-$(cat "$(dirname "$0")/../tests/fixtures/claude_cli/VERSION")}"
CACHE="${OMEGA_CLAUDE_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omega/claude-cli}"
DEST="$CACHE/$VERSION"
BIN="$DEST/node_modules/.bin/claude"
if [[ -x "$BIN" ]] && "$BIN" --version 2>/dev/null | grep -q "^$VERSION "; then
    echo "$BIN"
    exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
    echo "install-claude-cli: npm is not installed, cannot install claude $VERSION" >&2
    exit 3
fi
mkdir -p "$DEST"
# A fresh folder each time: a half-finished install is never mistaken for a good one.
TMP="$(mktemp -d "$CACHE/.install-XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
echo "install-claude-cli: installing @anthropic-ai/claude-code@$VERSION into $DEST" >&2
npm install --prefix "$TMP" --no-audit --no-fund --loglevel=error \
    "@anthropic-ai/claude-code@$VERSION" >&2
"$TMP/node_modules/.bin/claude" --version >&2
rm -rf "$DEST"
mv "$TMP" "$DEST"
trap - EXIT
echo "$BIN"
