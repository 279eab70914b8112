#!/usr/bin/env bash
# One command for a fresh GPU machine that has a copy of this working tree: build cfrkit's Cython kernels, then
# run benchmarks/gpu_check.py (at most ~8 minutes) with the JSON report and the log under $OUT.  About 10 minutes
# in all on the lent H100/H200 machines (their python3 holds torch, Cython, numpy; no network there).
#
#   bash benchmarks/gpu_check.sh --prepare     # HERE, where pip reaches PyPI: the wheels the GPU image lacks
#                                              # (gymnasium, pettingzoo for the Hanabi learners) into .whl/,
#                                              # which .git/info/exclude keeps out of git; carry .whl to the machine
#   bash benchmarks/gpu_check.sh [ARGS]        # THERE: install, check; ARGS go to gpu_check.py (e.g. --sections datagen)
#
# With the device tool:  run(command="bash benchmarks/gpu_check.sh", carry=[".whl"], timeout_s=600)
# Without .whl/ the Hanabi learners' rows say "failed: ModuleNotFoundError gymnasium"; everything else runs.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

if [ "${1:-}" = "--prepare" ]; then
    mkdir -p .whl
    exclude="$(git rev-parse --git-common-dir)/info/exclude"
    grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >> "$exclude"
    # pure-Python wheels (any platform); versions as tested with cfrkit here
    "$PY" -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 -d .whl \
        gymnasium==1.4.0 pettingzoo==1.27.0 farama-notifications==0.0.6
    ls -l .whl
    exit $?
fi

START=$(date +%s)
TOTAL=${GPU_CHECK_TOTAL_SECONDS:-570}   # the whole runner (a lent machine's command limit is 600 s)
OUT=${OUT:-$PWD/gpu_check_out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{
    echo "== $(date -u) on $(hostname): $(nproc) cores"
    nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv 2>&1 || echo "nvidia-smi failed"
    "$PY" -c "import sys, torch, numpy; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', \
torch.version.cuda, torch.cuda.is_available(), 'numpy', numpy.__version__)"
    if ls .whl/*.whl >/dev/null 2>&1; then
        echo "== wheels from .whl/"
        "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/gpu_check_site \
            .whl/*.whl && export PYTHONPATH=/tmp/gpu_check_site${PYTHONPATH:+:$PYTHONPATH}
    fi
    echo "== build the Cython kernels (in place, $(nproc) jobs; no build isolation: nothing can be fetched there)"
    t0=$(date +%s)
    # build_ext -j compiles the kernels in parallel (pip install -e . would build them one by one); the package is
    # then imported from this tree through PYTHONPATH, which is what an editable install gives
    "$PY" setup.py -q build_ext --inplace -j "$(nproc)" > "$OUT/build.log" 2>&1 \
        || { echo "build_ext failed (tail of $OUT/build.log):"; tail -5 "$OUT/build.log"; }
    echo "   $(( $(date +%s) - t0 )) s"
    export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
    # the check gets what the build left: at most its 480 s, minus 45 s for a cut-off section's grace and the JSON
    left=$(( TOTAL - ($(date +%s) - START) - 45 ))
    budget=$(( left < 480 ? left : 480 ))
    echo "== gpu_check (budget ${budget} s)"
    timeout $(( budget + 40 )) "$PY" benchmarks/gpu_check.py --budget "$budget" --out "$OUT/gpu_check.json" "$@"
    echo "== exit status $?"
} 2>&1 | tee "$OUT/gpu_check.log"
