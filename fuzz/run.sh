#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 60), one after another, with the limits
# docs/fuzzing.md gives. New inputs a run finds go to fuzz/found/<target>/ (ignored by git);
# the committed seeds in fuzz/corpus/<target>/ and fuzz/regressions/<target>/ are read only.
# A failing input is written to fuzz/artifacts/<target>/; keep it as a regression (see
# docs/fuzzing.md) once it is fixed.
#
#   fuzz/run.sh [SECONDS] [TARGET...]
# Needs: rustup's nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")"
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
failed=()
for t in "${targets[@]}"; do
    mkdir -p "found/$t"
    seeds=("corpus/$t")
    [ -d "regressions/$t" ] && seeds+=("regressions/$t")
    echo "== $t: ${seconds}s"
    # -max_len: inputs are files of a few KB (the seeds are at most 25 KB); -timeout: one input
    # taking a second is a complexity bug at these sizes; -rss_limit_mb: no input may need more.
    cargo +nightly fuzz run ${FUZZ_TARGET_DIR:+--target-dir "$FUZZ_TARGET_DIR"} "$t" "found/$t" "${seeds[@]}" -- \
        -max_total_time="$seconds" -max_len=32768 -timeout=2 -rss_limit_mb=2048 -print_final_stats=1 \
        || failed+=("$t")  # go on with the other targets; the input is in artifacts/$t
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "FAILED: ${failed[*]} (inputs under fuzz/artifacts/)"
    exit 1
fi
