#!/usr/bin/env bash
# The fuzzing campaign (docs/FUZZING.md): every fuzz target of every
# package, one after another on one worker, then a table of executions.
#
#   test/fuzz-campaign.sh                  # every target
#   test/fuzz-campaign.sh 'JoinGroup|Fetch' # targets whose name matches
#
# FUZZTIME is the time per request-fuzzer target (internal/broker, one per
# API key; default 3m), DECODER_FUZZTIME the time per other target (5m).
# MINIMIZE bounds the minimization of each new input (50 tries: a broker
# round trip per try makes the default minute a long stall, and a
# minimization cut short by time restarts the worker). PKGS limits the
# packages (default ./...). Logs go to LOGDIR. VMEM_KB caps each process's
# virtual memory (8 GiB), so a runaway input kills its worker, not the
# machine.
# Exits non-zero if any target failed; the failing input is in the
# package's testdata/fuzz/<target>/, as go test says.
set -u
cd "$(dirname "$0")/.."
# pebble (streams/state) uses the pure-Go zstd, as the Makefile's TAGS.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=pebblegozstd"

GO=${GO:-go}
FUZZTIME=${FUZZTIME:-3m}
DECODER_FUZZTIME=${DECODER_FUZZTIME:-5m}
MINIMIZE=${MINIMIZE:-50x}
LOGDIR=${LOGDIR:-$(mktemp -d /tmp/samsa-fuzz.XXXXXX)}
filter=${1:-.}
mkdir -p "$LOGDIR"
ulimit -v "${VMEM_KB:-8388608}"

rows=()
failed=0
for pkg in $($GO list ${PKGS:-./...}); do
	targets=$($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz' | grep -E -- "$filter")
	[ -n "$targets" ] || continue
	short=${pkg#github.com/samsa-io/samsa/}
	time=$DECODER_FUZZTIME
	[ "$short" = internal/broker ] && time=$FUZZTIME
	for f in $targets; do
		log="$LOGDIR/$f.log"
		stats="$LOGDIR/$f.stats"
		rm -f "$stats"
		echo "== $short $f ($time)" >&2
		SAMSA_FUZZ_STATS="$stats" $GO test -run '^$' -fuzz "^$f\$" -fuzztime "$time" \
			-fuzzminimizetime "$MINIMIZE" -parallel 1 "$pkg" >"$log" 2>&1
		rc=$?
		last=$(grep -E 'execs: [0-9]+' "$log" | tail -1)
		execs=$(sed -E 's/.*execs: ([0-9]+).*/\1/' <<<"$last")
		corpus=$(sed -nE 's/.*\(total: ([0-9]+)\).*/\1/p' <<<"$last")
		# The request fuzzers' counts: inputs that reached the handler.
		reached=""
		if [ -s "$stats" ]; then
			reached=$(awk '{r += $5} END {print r}' "$stats")
		fi
		result=ok
		if [ $rc -ne 0 ]; then
			if crasher=$(grep -m1 -oE 'testdata/fuzz/[^ ]+' "$log"); then
				result="FAIL ($crasher)"
				failed=1
			elif grep -q '^    context deadline exceeded$' "$log"; then
				# go.dev/issue/75804: Go 1.26's coordinator reports its own
				# -fuzztime deadline as a failure, with no input.
				result="ok (deadline race, go#75804)"
			else
				result="FAIL (see $log)"
				failed=1
			fi
		fi
		rows+=("| $short | $f | $time | ${execs:-0} | ${reached:--} | ${corpus:-} | $result |")
		echo "   execs ${execs:-0}, reached ${reached:--}, corpus ${corpus:-?}: $result" >&2
	done
done

echo "| package | target | time | execs | reached handler | corpus | result |"
echo "|---|---|---|---:|---:|---:|---|"
printf '%s\n' "${rows[@]}"
echo "logs: $LOGDIR" >&2
exit $failed
