#!/usr/bin/env bash
# End-to-end check of the chat interface: runs the real binary on the
# demo bundle inside tmux, sends a message, waits for the reply and the
# stats, saves checkpoint "a", quits, starts again, loads "a" and checks
# the conversation came back.
#
#   scripts/tui-e2e.sh                 # builds orchard, runs `orchard --demo`
#   ORCHARD_CMD="/path/to/bin --demo" scripts/tui-e2e.sh
#   TUI_E2E_TIMEOUT=120 scripts/tui-e2e.sh   # seconds per wait (default 90)
#
# Exit status: 0 passed, 1 a step failed (the screen is printed), 2 the
# environment lacks tmux or the build failed.
set -euo pipefail

cd "$(dirname "$0")/.."

if ! command -v tmux >/dev/null 2>&1; then
	echo "tui-e2e: tmux is required (apt-get install tmux / brew install tmux)" >&2
	exit 2
fi

timeout_s=${TUI_E2E_TIMEOUT:-90}
work=$(mktemp -d)
session="orchard-e2e-$$"
socket="$work/tmux.sock"
tm() { tmux -S "$socket" "$@"; }

cleanup() {
	tm kill-server >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

if [ -z "${ORCHARD_CMD:-}" ]; then
	echo "tui-e2e: building orchard"
	if ! go build -o "$work/orchard" .; then
		echo "tui-e2e: build failed" >&2
		exit 2
	fi
	ORCHARD_CMD="$work/orchard --demo"
fi

# Keep checkpoints and settings of this run apart from the user's; the
# cache (where the demo bundle is made once) is shared to save time.
export XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data" XDG_STATE_HOME="$work/state"
export ORCHARD_E2E_DIR="$work/store"
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME" "$ORCHARD_E2E_DIR"

screen() { tm capture-pane -p -t "$session" 2>/dev/null || true; }

fail() {
	echo "tui-e2e: FAIL: $*" >&2
	echo "----- screen -----" >&2
	screen >&2
	echo "------------------" >&2
	exit 1
}

# wait_for TEXT...: wait until every TEXT is on the screen at once.
wait_for() {
	local deadline=$((SECONDS + timeout_s)) s missing
	while :; do
		s=$(screen)
		missing=""
		for want in "$@"; do
			if ! grep -qF -- "$want" <<<"$s"; then
				missing=$want
				break
			fi
		done
		[ -z "$missing" ] && return 0
		if ! tm has-session -t "$session" 2>/dev/null; then
			fail "orchard exited while waiting for \"$missing\""
		fi
		[ $SECONDS -ge $deadline ] && fail "\"$missing\" did not appear within ${timeout_s}s"
		sleep 0.2
	done
}

# wait_gone TEXT: wait until TEXT is no longer on the screen.
wait_gone() {
	local deadline=$((SECONDS + timeout_s))
	while grep -qF -- "$1" <<<"$(screen)"; do
		[ $SECONDS -ge $deadline ] && fail "\"$1\" stayed on the screen for ${timeout_s}s"
		sleep 0.2
	done
}

start() {
	tm new-session -d -s "$session" -x 120 -y 40 "$ORCHARD_CMD"
	wait_for "Type a message"
}

type_line() {
	tm send-keys -t "$session" -l -- "$1"
	tm send-keys -t "$session" Enter
}

quit() {
	tm send-keys -t "$session" C-c
	sleep 0.2
	tm send-keys -t "$session" C-c
	local deadline=$((SECONDS + timeout_s))
	while tm has-session -t "$session" 2>/dev/null; do
		[ $SECONDS -ge $deadline ] && fail "orchard did not quit on ctrl+c ctrl+c"
		sleep 0.2
	done
}

prompt="Tell me about apple orchards"

echo "tui-e2e: first run: $ORCHARD_CMD"
start
type_line "$prompt"
wait_for "$prompt" "tok/s"
# The reply is over when its footer (tokens · tok/s) is printed.
wait_for "tokens ·" "○"
tm send-keys -t "$session" C-t
wait_for "stats" "decode" "latency" "context" "accepted"
tm send-keys -t "$session" C-t
type_line "/save a"
wait_for 'Saved checkpoint "a"'
# The context the conversation fills, as the status bar shows it.
used=$(screen | grep -oE 'ctx [0-9,]+/[0-9,]+' | tail -n 1)
[ -n "$used" ] || fail "no context figure in the status bar"
quit

echo "tui-e2e: second run"
start
type_line "/load a"
# The restored conversation fills the same context; its first message is
# at the top of the transcript.
wait_for 'Loaded checkpoint "a"' "$used"
tm send-keys -t "$session" C-Home
wait_for "$prompt"
quit

echo "tui-e2e: ok"
