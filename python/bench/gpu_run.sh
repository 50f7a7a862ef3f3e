#!/usr/bin/env bash
# The Python and refget GPU checks in one run, on a GPU machine with Python 3 (PyTorch; CuPy
# optional) but without Rust or network, from the repository root:
#   1. python/tests/test_cuda.py (device="cuda" against the original bytes and pyfaidx),
#   2. python/bench/read_ranges.py (random 8/16 KiB windows into tensors, GPU against CPU),
#   3. scripts/refget_load.py with the archive on the CPU, resident on the GPU, and the plain
#      FASTA through its index.
# Usage: bash python/bench/gpu_run.sh [DIR]   (DIR, default gpu-bundle-h6, holds:)
#   aceapex           the release CLI built with the kernels (cargo build --release)
#   aceapex-*.whl     the abi3 wheel built with the kernels (maturin build --release)
#   genome.acx        an archive of a FASTA file (`aceapex compress` defaults)
#   wheels/*.whl      pytest and pyfaidx with their dependencies (pure Python), used for
#                     whichever of them the machine's Python lacks
# Nothing is installed system-wide: the wheels are unpacked (python3 -m zipfile) into a
# temporary folder on PYTHONPATH. Exit status: 1 when any of the three steps failed.
set -uo pipefail
B=${1:-gpu-bundle-h6}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/py"
python3 -m zipfile -e "$B"/aceapex-*.whl "$T/py"
for m in pytest pluggy iniconfig packaging pygments exceptiongroup tomli typing_extensions \
    importlib_metadata zipp pyfaidx; do
    if ! python3 -c "import $m" 2>/dev/null; then
        for w in "$B"/wheels/"$m"-*.whl; do [ -e "$w" ] && python3 -m zipfile -e "$w" "$T/py"; done
    fi
done
export PYTHONPATH="$T/py${PYTHONPATH:+:$PYTHONPATH}"
chmod +x "$B/aceapex"
nvidia-smi -L || true
python3 -c 'import aceapex, torch; print("aceapex", aceapex.__file__, "gpu support", aceapex.has_gpu_support(), "torch", torch.__version__, torch.cuda.get_device_name(0))'
failed=0

echo "== 1. pytest python/tests/test_cuda.py"
(cd python/tests && python3 -m pytest -q -rs -p no:cacheprovider test_cuda.py) || failed=1

echo "== 2. python/bench/read_ranges.py"
python3 -W ignore python/bench/read_ranges.py "$B/genome.acx" --seconds 1 || failed=1

echo "== 3. scripts/refget_load.py"
"$B/aceapex" decompress -q --device cpu "$B/genome.acx" -o "$T/genome.fa" &&
    python3 scripts/refget_load.py "$T/genome.fa" --archive "$B/genome.acx" --aceapex "$B/aceapex" \
        --sources cpu,gpu,fasta --clients 4,16 --seconds 5 || failed=1

echo "== done: $([ $failed = 0 ] && echo all passed || echo FAILED)"
exit $failed
