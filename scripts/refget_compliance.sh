#!/usr/bin/env bash
# Runs the GA4GH refget compliance suite (PyPI `refget-compliance`) against `aceapex serve` on
# the loopback interface, with the test sequences the suite ships (yeast chromosomes I and VI,
# phage phiX174 NC_001422.1, circular), compressed into one archive.
#
# Every test must pass or be skipped by the suite for a reason docs/REFGET.md gives; the
# script prints each test's result and exits non-zero if any failed.
#
# Usage: scripts/refget_compliance.sh
# Environment: ACEAPEX (a built aceapex binary; default: `cargo build --release`, then
# $CARGO_TARGET_DIR/release/aceapex), PYTHON (default python3), REFGET_COMPLIANCE_VERSION
# (default 1.2.6).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)
python=${PYTHON:-python3}
version=${REFGET_COMPLIANCE_VERSION:-1.2.6}

bin=${ACEAPEX:-}
if [[ -z $bin ]]; then
    cargo build --release --quiet --bin aceapex
    target_dir=${CARGO_TARGET_DIR:-target}
    case $target_dir in /*) ;; *) target_dir=$root/$target_dir ;; esac
    bin=$target_dir/release/aceapex
fi

work=$(mktemp -d)
server=
cleanup() {
    if [[ -n $server ]]; then
        kill -TERM "$server" 2>/dev/null || true
        wait "$server" 2>/dev/null || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

echo "refget-compliance $version: installing into a virtual environment"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "refget-compliance==$version"
seqs=$("$work/venv/bin/python" -c \
    'import compliance_suite, os; print(os.path.join(os.path.dirname(compliance_suite.__file__), "sequences"))')

# the suite's FASTA files, one after the other, each ending in a newline
for f in I VI NC; do
    cat "$seqs/$f.faa"
    [[ -z $(tail -c 1 "$seqs/$f.faa") ]] || echo
done >"$work/suite.fa"
"$bin" compress -q "$work/suite.fa" -o "$work/suite.fa.acx"

"$bin" serve "$work/suite.fa.acx" --listen 127.0.0.1:0 --circular NC_001422.1 \
    2>"$work/serve.log" &
server=$!
addr=
for _ in $(seq 100); do
    addr=$(sed -n 's|.*refget server on http://\([^/]*\)/.*|\1|p' "$work/serve.log")
    [[ -n $addr ]] && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.1
done
if [[ -z $addr ]]; then
    echo "error: the server did not start:" >&2
    cat "$work/serve.log" >&2
    exit 1
fi
echo "aceapex serve on $addr"

"$work/venv/bin/refget-compliance" report --server "http://$addr/" --json "$work/report.json" \
    --no-web 2>"$work/suite.log" >/dev/null || {
    echo "error: refget-compliance failed to run:" >&2
    cat "$work/suite.log" >&2
    exit 1
}

"$work/venv/bin/python" - "$work/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))[0]
names = {1: "pass", 0: "skip", -1: "FAIL"}
for t in report["test_results"]:
    line = f'{names.get(t["result"], t["result"]):4}  {t["name"]}'
    if t["result"] != 1:
        line += f'  ({t["text"]})'
    print(line)
    for case in t.get("edge_cases", []):
        if case.get("result") != 1:
            print(f'        case {case}')
print(f'{report["total_tests_passed"]} passed, {report["total_tests_skipped"]} skipped, '
      f'{report["total_tests_failed"]} failed of {report["total_tests"]}')
sys.exit(1 if report["total_tests_failed"] else 0)
PY
