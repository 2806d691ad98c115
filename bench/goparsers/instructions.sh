#!/usr/bin/env bash
# Counts the instructions each parser spends per event on every feedgen
# shape, under valgrind's callgrind (perf's instruction counter is not
# available in every container): one run generates the feed only, one
# generates and parses it LOOPS times; the difference over LOOPS × events
# is the parse's instructions per event, garbage collection included.
#
#   apt-get install -y valgrind    # once
#   bench/goparsers/instructions.sh [SCALE] [LOOPS]
#
# SCALE divides BenchmarkParsers' feed sizes (default 10: callgrind runs
# some 50 times slower than the CPU); LOOPS defaults to 2. Valgrind's
# CPU has no SHA extensions: Go hashes there with AVX2, several times the
# instructions SHA-256 takes on a CPU that has them (calsyncd hashes every
# event; the peers hash nothing).
#
# The count is of one thread (GOMAXPROCS=1), and the collector stops the
# world (GODEBUG=gcstoptheworld=1): with more threads the idle ones'
# spinning, and with a concurrent collector its pacing, depend on timing
# under valgrind and swamp the figure (the same run counted 0.8 and
# 1.1 G instructions). So the collector's work is counted on that thread
# too, without the write barriers of a concurrent mark, for every parser
# alike; repeated runs agree to 0.1%, even on a loaded machine. Go's
# asynchronous preemption signals are turned off, which callgrind does
# not follow; the binary is built without cgo.
set -euo pipefail
cd "$(dirname "$0")"
scale=${1:-10}
loops=${2:-2}

bin=$(mktemp -d)/instr
trap 'rm -rf "$(dirname "$bin")"' EXIT
CGO_ENABLED=0 go build -o "$bin" ./instr

count() { # parser shape events loops -> instructions
	GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,gcstoptheworld=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$bin" -parser "$1" -shape "$2" -events "$3" -loops "$4" 2>&1 |
		sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p'
}

printf '%-13s %8s %-12s %14s %12s\n' shape events parser instr/event x-calsyncd
declare -A base mine
while read -r shape events parser; do
	key="$shape/$events"
	if [ -z "${base[$key]:-}" ]; then
		base[$key]=$(count calsyncd "$shape" "$events" 0)
	fi
	total=$(count "$parser" "$shape" "$events" "$loops")
	per=$(( (total - base[$key]) / (loops * events) ))
	[ "$parser" = calsyncd ] && mine[$key]=$per
	ratio=$(awk -v a="$per" -v b="${mine[$key]}" 'BEGIN { printf "%.2f", a / b }')
	printf '%-13s %8d %-12s %14d %12s\n' "$shape" "$events" "$parser" "$per" "$ratio"
done < <("$bin" -list "$scale")
