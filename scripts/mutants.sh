#!/usr/bin/env bash
# Mutation testing with cargo-mutants (`cargo install cargo-mutants --locked`); configuration in
# .cargo/mutants.toml, figures and what to do with a missed mutant in docs/testing.md.
#
#   scripts/mutants.sh diff [BASE]          the mutants in what this branch changed since it left
#                                           BASE (default: main), tested by each crate's own tests
#   scripts/mutants.sh crate PKG [K/N]      every mutant of package PKG, or shard K of N (K from 0)
#   scripts/mutants.sh file PKG PATH...     the mutants of these files of PKG (after adding tests)
#
# A crate whose own tests need a feature enables it with a dev-dependency on itself (ledger-agent's
# `outbox`), so that every mode here, `diff` too, tests its feature's code.
#
# Anything after `--` goes to cargo-mutants (e.g. `-- --iterate`, `-- --list`). Runs at
# `nice -n ${MUTANTS_NICE:-10}` with `-j ${MUTANTS_JOBS:-1}`: this is a shared 2-core machine.
# MUTANTS_OPT_LEVEL=0 builds PKG's code unoptimised in crate and file mode: a rule crate's tests
# are optimised (opt-level 2) for their exhaustive checks, and that rebuild is most of a mutant's
# time (docs/testing.md). `K/N -- --iterate` re-tests another slice (cargo-mutants shards what is
# left after dropping the caught): re-test a shard's missed mutants by name (`-- --re ...`).
# Results: target/mutants/<run>/mutants.out/{caught,missed,timeout,unviable}.txt.
# Exit status: cargo-mutants' own (0 all caught, 2 some missed, 3 timeouts, 4 baseline failed).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() {
    sed -n '4,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 64
}

mode=${1:-}
[ -n "$mode" ] || usage
shift

extra=()
args=()
while [ $# -gt 0 ]; do
    if [ "$1" = "--" ]; then
        shift
        extra=("$@")
        break
    fi
    args+=("$1")
    shift
done

cargo mutants --version >/dev/null 2>&1 || {
    echo "cargo-mutants is not installed: cargo install cargo-mutants --locked" >&2
    exit 69
}

out=target/mutants
mkdir -p "$out"
select=()
case "$mode" in
diff)
    base=${args[0]:-main}
    git rev-parse --verify --quiet "$base^{commit}" >/dev/null || {
        echo "no such base: $base" >&2
        exit 64
    }
    if ! git diff --quiet HEAD -- '*.rs'; then
        # cargo-mutants copies the working tree, but the diff is of commits: line numbers would
        # not match, and the uncommitted code would be tested without being in the diff.
        echo "uncommitted changes to .rs files: commit (or stash) them first" >&2
        exit 65
    fi
    name="diff-$(git rev-parse --abbrev-ref HEAD | tr '/' '-')"
    diff_file="$out/$name.diff"
    # Three dots: what the branch changed since its merge base with BASE, not what BASE gained.
    git diff "$base...HEAD" >"$diff_file"
    if ! grep -q '^+++ b/.*\.rs$' "$diff_file"; then
        echo "no Rust source changed since $base: nothing to mutate"
        exit 0
    fi
    echo "mutating what $(git rev-parse --abbrev-ref HEAD) changed since $base ($(git merge-base "$base" HEAD | cut -c1-10))"
    select=(--in-diff "$diff_file")
    ;;
crate)
    [ ${#args[@]} -ge 1 ] || usage
    pkg=${args[0]}
    select=(-p "$pkg")
    name=$pkg
    if [ ${#args[@]} -ge 2 ]; then
        shard=${args[1]}
        [[ $shard =~ ^[0-9]+/[0-9]+$ ]] || {
            echo "shard is K/N, K from 0 to N-1: $shard" >&2
            exit 64
        }
        select+=(--shard "$shard")
        name="$pkg-shard-${shard%/*}-of-${shard#*/}"
    fi
    ;;
file)
    [ ${#args[@]} -ge 2 ] || usage
    pkg=${args[0]}
    select=(-p "$pkg")
    for f in "${args[@]:1}"; do
        select+=(-f "$f")
    done
    name="$pkg-files"
    ;;
*)
    usage
    ;;
esac
if [ -n "${MUTANTS_OPT_LEVEL:-}" ] && [ -n "${pkg:-}" ]; then
    [[ $MUTANTS_OPT_LEVEL =~ ^[0-3sz]$ ]] || {
        echo "MUTANTS_OPT_LEVEL: 0-3, s or z, not $MUTANTS_OPT_LEVEL" >&2
        exit 64
    }
    select+=("--cargo-arg=--config=profile.mutants.package.$pkg.opt-level=$MUTANTS_OPT_LEVEL")
fi

set +e
nice -n "${MUTANTS_NICE:-10}" cargo mutants -j "${MUTANTS_JOBS:-1}" -o "$out/$name" \
    "${select[@]}" "${extra[@]}"
status=$?
set -e

results="$out/$name/mutants.out"
if [ -f "$results/caught.txt" ]; then
    count() { [ -f "$results/$1.txt" ] && wc -l <"$results/$1.txt" || echo 0; }
    caught=$(count caught)
    missed=$(count missed)
    timeout=$(count timeout)
    unviable=$(count unviable)
    viable=$((caught + missed + timeout))
    echo "== $name: caught $caught, missed $missed, timeouts $timeout, unviable $unviable"
    if [ "$viable" -gt 0 ]; then
        # Timeouts count as caught (the mutant made the tests hang), as in docs/testing.md.
        echo "== caught or timed out: $(((caught + timeout) * 1000 / viable / 10)).$(((caught + timeout) * 1000 / viable % 10))% of $viable viable"
    fi
    if [ "$missed" -gt 0 ]; then
        echo "== missed (add a test that fails on each, or exclude it in .cargo/mutants.toml with a reason):"
        cat "$results/missed.txt"
    fi
fi
exit $status
