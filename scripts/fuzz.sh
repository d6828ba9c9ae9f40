#!/usr/bin/env bash
# A long property-testing campaign, outside CI: runs the properties that `cargo test` runs with
# small fixed budgets (crates/skills/tests/properties.rs, crates/llm/tests/sse_properties.rs,
# crates/agent/tests/transcript_properties.rs) for a time budget per target, in chunks of cases
# with a fresh random seed each, and prints per target the cases run, the time and the failures.
#
# A failing case is shrunk and its seed saved in the crate's proptest-regressions/*.txt, which
# `cargo test` replays first: commit the file with the fix. The output of a failing run is kept
# in target/fuzz/. A target that failed is not run again in the same campaign (its saved seed
# would fail first every time); its failing chunk counts whole in the cases column.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_TARGET] [FILTER]
#   SECONDS_PER_TARGET  default 60 (or $FUZZ_SECONDS)
#   FILTER              run only targets whose name contains it (e.g. `confined`, `sse`)
# Environment: FUZZ_PROFILE=release builds optimised test binaries (more cases a second, but no
# debug assertions or overflow checks); the default is the test profile that `cargo test` uses.
# Runs under `nice -n 19`: the machine is shared.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${FUZZ_SECONDS:-60}}
filter=${2:-}
profile=${FUZZ_PROFILE:-test}
out=target/fuzz
mkdir -p "$out"

# package  test-binary  test-function  property-name (as the test prints it)
targets=(
  "skillet-skills properties frontmatter_fast_path_agrees_with_the_real_parser frontmatter_fast_path_agrees"
  "skillet-skills properties frontmatter_parsing_never_panics frontmatter_parsing_never_panics"
  "skillet-skills properties discovery_never_panics_on_any_bytes discovery_never_panics"
  "skillet-skills properties catalog_fits_its_budget_and_keeps_names_whole catalog_fits_its_budget"
  "skillet-skills properties confined_reads_never_leave_the_root confined_reads"
  "skillet-skills properties confined_reads_find_what_is_inside confined_reads_find"
  "skillet-skills properties confined_writes_never_touch_anything_outside confined_writes"
  "skillet-skills properties cleaning_removes_only_what_hides_text cleaning"
  "skillet-skills properties neutralized_bodies_hold_no_wrapper_tag neutralize_wrapper"
  "skillet-llm sse_properties any_split_gives_the_same_events sse_any_split"
  "skillet-llm sse_properties events_are_those_of_the_whatwg_rules sse_whatwg_rules"
  "skillet-agent transcript_properties transcripts_read_back_as_written transcript_round_trip"
  "skillet-agent transcript_properties damaged_transcripts_never_panic transcript_damage_never_panics"
  "skillet-agent transcript_properties what_loads_still_loads_after_resuming transcript_resume_keeps_what_loads"
  "skillet-agent transcript_properties a_torn_last_record_keeps_every_earlier_one transcript_torn_last_record"
  "skillet-agent transcript_properties a_damaged_middle_line_is_an_error_naming_it transcript_damaged_middle_line"
)

echo "== building the property tests (profile $profile)"
declare -A binary
while read -r line; do
  name=$(jq -r '.target.name' <<<"$line")
  exe=$(jq -r '.executable' <<<"$line")
  binary[$name]=$exe
done < <(nice -n 19 cargo test --profile "$profile" --no-run --message-format=json \
  -p skillet-skills --test properties -p skillet-llm --test sse_properties \
  -p skillet-agent --test transcript_properties 2>/dev/null |
  jq -c 'select(.reason == "compiler-artifact" and .executable != null)')

printf '%-36s %6s %10s %9s %9s  %s\n' target runs cases seconds cases/s failures
summary=()
total_cases=0
total_failures=0
started_all=$SECONDS
for target in "${targets[@]}"; do
  read -r package test function name <<<"$target"
  [[ -z $filter || $name == *"$filter"* ]] || continue
  exe=${binary[$test]:?"no binary for $test ($package)"}
  runs=0 cases=0 failures=0 chunk=500 note=""
  started=$SECONDS
  while ((SECONDS - started < seconds)); do
    log=$out/$name-$((runs + 1)).log
    # Each chunk is a fresh random seed; the test prints "property NAME: N cases in T".
    if PROPTEST_CASES=$chunk nice -n 19 "$exe" --exact "$function" --nocapture \
      --test-threads=1 >"$log" 2>&1; then
      rm -f "$log"
    else
      failures=1
      note="FAILED: $log"
      grep -m1 -A2 "failed:" "$log" | cut -c1-300 >&2 || true
    fi
    runs=$((runs + 1))
    cases=$((cases + chunk))
    ((failures == 0)) || break
    # Size the next chunk to about 20 s of what is left, from the rate so far.
    elapsed=$((SECONDS - started))
    left=$((seconds - elapsed))
    rate=$((cases / (elapsed > 0 ? elapsed : 1)))
    chunk=$((rate * (left < 20 ? left : 20)))
    ((chunk >= 100)) || chunk=100
  done
  elapsed=$((SECONDS - started))
  printf '%-36s %6d %10d %9d %9d  %s\n' "$name" "$runs" "$cases" "$elapsed" \
    "$((cases / (elapsed > 0 ? elapsed : 1)))" "${note:-0}"
  total_cases=$((total_cases + cases))
  total_failures=$((total_failures + failures))
  summary+=("$name")
done
echo "== ${#summary[@]} targets, $total_cases cases in $((SECONDS - started_all)) s," \
  "$total_failures failing target(s)"
((total_failures == 0))
