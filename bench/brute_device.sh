#!/usr/bin/env bash
# Issues 7 and 8's brute-force comparison on the GPU machine: 2^20 uniform points in 16, 64 and
# 128 (or 256) dimensions through ted-join, gds-join, meta-16q (all with mode=brute-force) and
# the cuBLAS path (bench/cublas_join), each against the FP64 DGEMM peak (meta-16q: the FP16 GEMM
# peak) measured at the start of the same run.
# usage: bench/brute_device.sh BIN_DIR OUT_DIR
#   BIN_DIR holds epsjoin and bench/cublas_join (a build folder).
#   EPS_16, EPS_64, EPS_128, EPS_256 override the radii; N overrides the number of points (smoke tests);
#   DIMS overrides the list of dimensions; ENGINES the epsjoin engines.
# Writes OUT_DIR/peak.jsonl, cublas.jsonl, ENGINE-D.json, failures.txt and summary.md. A failing
# or timed-out run is recorded in failures.txt and the rest go on.
set -euo pipefail
bin=$(cd "$1" && pwd)
out=$2
mkdir -p "$out"
out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
data=/tmp/epsjoin-bench
n=${N:-1048576}
dims=${DIMS:-"16 64 128"}
# ENGINE[:key=value,...]; ted-join without its short-circuit does every multiply-add of the
# square, which is what the TFLOP/s figure is about.
engines=${ENGINES:-"ted-join:short_circuit=off ted-join gds-join"}
limit=300
mkdir -p "$data"

epsjoin=$bin/epsjoin
cublas_join=$bin/bench/cublas_join
[[ -x $cublas_join ]] || cublas_join=$bin/cublas_join
for program in "$epsjoin" "$cublas_join"; do
  [[ -x $program ]] || { echo "brute_device.sh: no program $program" >&2; exit 2; }
done

# cuBLAS is the one shared CUDA library, and the GPU machine has it only from the Python wheel:
# nvidia-cublas (CUDA 13) unpacks to nvidia/cu13/lib, the older nvidia-cublas-cuXX to
# nvidia/cublas/lib. The first folder that really holds libcublas.so.13 wins.
cublas_lib=$(python3 - <<'PY' 2>/dev/null || true
import glob, os
candidates = []
try:
    import nvidia.cublas
    candidates += [os.path.join(p, "lib") for p in list(nvidia.cublas.__path__)]
except Exception:
    pass
try:
    import nvidia
    candidates += [os.path.join(p, "cu13", "lib") for p in list(nvidia.__path__)]
except Exception:
    pass
for c in candidates:
    if glob.glob(os.path.join(c, "libcublas.so.13*")):
        print(c)
        break
PY
)
if [[ -z $cublas_lib ]]; then
  cublas_lib=/usr/local/cuda/lib64
  echo "brute_device.sh: no cuBLAS Python wheel found, trying $cublas_lib" >&2
fi
echo "brute_device.sh: libcublas from $cublas_lib" >&2
run_cublas() {
  LD_LIBRARY_PATH="$cublas_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout "$limit" "$cublas_join" "$@"
}

failures=$out/failures.txt
: > "$failures"
: > "$out/peak.jsonl"
: > "$out/cublas.jsonl"
# record NAME D COMMAND...: runs it, appending stdout to the file the caller redirects to, and
# notes a failure (its exit status; 124 is the time limit) instead of stopping the script.
record() {
  local name=$1 d=$2
  shift 2
  local status=0
  "$@" || status=$?
  if ((status != 0)); then
    echo "$name $d exit $status" >> "$failures"
    echo "brute_device.sh: $name d=$d failed with exit status $status" >&2
  fi
}

record dgemm-peak - run_cublas peak --size 8192 --repeat 5 >> "$out/peak.jsonl"
# meta-16q's reference: FP16 inputs, FP32 accumulation and output.
record hgemm-peak - run_cublas peak --half --size 8192 --repeat 5 >> "$out/peak.jsonl"

stem=Uniform
for d in $dims; do
  if ((n == 1048576)); then name=${stem}${d}D1Mi; else name=${stem}${d}D${n}; fi
  file=$data/$name.npy
  [[ -f $file ]] || "$epsjoin" gen "uniform:$d:$n" --output "$file"
  # The default radii give each point a few neighbours (uniform 2^20 points, median k-th
  # neighbour distance measured on 300 queries with numpy: 16-D 0.50 / 0.58 for k = 1 / 5,
  # 64-D 2.11 / 2.20, 128-D 3.48 / 3.58).
  eps_var=EPS_$d
  case $d in
    16) eps=${!eps_var:-0.58} ;;
    64) eps=${!eps_var:-2.2} ;;
    128) eps=${!eps_var:-3.58} ;;
    256) eps=${!eps_var:-5.0} ;;
    *) eps=${!eps_var:?set EPS_$d for d=$d} ;;
  esac
  record cublas "$d" run_cublas join --data "$file" --eps "$eps" --gemm-pass >> "$out/cublas.jsonl"
  for spec in $engines; do
    engine=${spec%%:*}
    params=(--param mode=brute-force)
    if [[ $spec == *:* ]]; then
      IFS=, read -ra extra <<< "${spec#*:}"
      for kv in "${extra[@]}"; do params+=(--param "$kv"); done
    fi
    tag=${spec//[:=,]/_}
    # The default format without --output is a count: no pairs leave the engine.
    record "$tag" "$d" timeout "$limit" "$epsjoin" join --input "$file" --eps "$eps" \
      --engine "$engine" "${params[@]}" --json --quiet > "$out/$tag-$d.json"
  done
done

python3 - "$out" "$engines" $dims <<'PY' | tee "$out/summary.md"
import json, os, sys

out, dims = sys.argv[1], [int(d) for d in sys.argv[3:]]
engines = [e.replace(":", "_").replace("=", "_").replace(",", "_") for e in sys.argv[2].split()]

def lines(path):
    if not os.path.exists(path):
        return []
    rows = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            try:
                rows.append(json.loads(line))
            except ValueError:
                pass
    return rows

failed = {}
for line in open(os.path.join(out, "failures.txt")):
    name, d, _, status = line.split()
    failed[(name, d)] = status

peaks = [r for r in lines(os.path.join(out, "peak.jsonl")) if r.get("mode") == "dgemm-peak"]
peak = peaks[-1]["tflops"] if peaks else None
half_peaks = [r for r in lines(os.path.join(out, "peak.jsonl")) if r.get("mode") == "hgemm-peak"]
half_peak = half_peaks[-1]["tflops"] if half_peaks else None
cublas = {r["d"]: r for r in lines(os.path.join(out, "cublas.jsonl")) if r.get("mode") == "join"}

print("# Brute force, FP64: TFLOP/s against the DGEMM peak\n")
if peak:
    print(f"DGEMM peak ({peaks[-1]['size']}^3, median of the runs): **{peak:.2f} TFLOP/s** "
          f"on {cublas[next(iter(cublas))]['device'] if cublas else 'this device'}.\n")
else:
    print("DGEMM peak: not measured (see failures.txt).\n")
if half_peak:
    print(f"FP16 GEMM peak (FP32 accumulation, {half_peaks[-1]['size']}^3): **{half_peak:.2f} TFLOP/s**; "
          "meta-16q's rows are against it.\n")
print("TFLOP/s is 2 N^2 d / seconds: the rate an engine would need on the full N x N square, "
      "whatever it really computes. Pairs include self pairs. cublas seconds exclude the upload "
      "of the points; `gemm` is the same GEMMs without the threshold kernels.\n")
print("| engine | d | N | eps | seconds | pairs | TFLOP/s | of peak | notes |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
for d in dims:
    rows = []
    r = cublas.get(d)
    if r:
        note = f"gemm {r['gemm_seconds']:.3f} s ({r['gemm_tflops']:.2f} TFLOP/s); upload {r['upload_seconds']:.3f} s" \
            if "gemm_seconds" in r else ""
        rows.append(("cublas", r["n"], r["eps"], r["seconds"], r["pairs"], note))
    else:
        rows.append(("cublas", None, None, None, None, f"failed: exit {failed.get(('cublas', str(d)), '?')}"))
    for e in engines:
        rs = lines(os.path.join(out, f"{e}-{d}.json"))
        if rs and (e, str(d)) not in failed:
            s = rs[-1]
            pairs = s.get("pairs_with_self", s["pairs"] + s["n"])
            stages = ", ".join(f"{k} {v:.3f} s" for k, v in s.get("stages", {}).items())
            rows.append((e, s["n"], s["eps"], s["seconds"], pairs, stages))
        else:
            rows.append((e, None, None, None, None, f"failed: exit {failed.get((e, str(d)), 'no output')}"))
    for engine, n, eps, seconds, pairs, note in rows:
        if seconds is None:
            print(f"| {engine} | {d} | | | | | | | {note} |")
            continue
        tflops = 2.0 * n * n * d / seconds / 1e12
        against = half_peak if engine.startswith("meta") else peak
        share = f"{100 * tflops / against:.1f} %" if against else ""
        print(f"| {engine} | {d} | {n} | {eps:g} | {seconds:.3f} | {pairs} | {tflops:.2f} | {share} | {note} |")
PY
