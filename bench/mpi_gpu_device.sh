#!/usr/bin/env bash
# mpi-join with one rank a GPU on a machine of several GPUs, against the one-process join on one
# GPU in the same run (issue 29's "mpirun -np 2", issue 30's "mpirun -np G"). Open MPI comes from
# the Debian packages of the build machine when the GPU machine has none: MPI_PACK holds
# mpi-root.tgz (Open MPI's and PMIx's plugin folders, unpacked at their own paths, which must not
# exist yet) and mpi-private.tgz (mpirun and the libraries, kept apart in /tmp/ompi).
#
# usage: MPI_PACK=DIR [MPI_CASES=name,...] bench/mpi_gpu_device.sh EPSJOIN_WITH_MPI OUT_DIR RANKS...
set -uo pipefail
binary=$1 out=$2
shift 2
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
# The GPU machine's own Open MPI when the binary finds its libraries there, else the carried one.
if ! command -v mpirun >/dev/null || ldd "$binary" | grep -q "not found"; then
  [ -e /usr/lib/x86_64-linux-gnu/openmpi ] || tar xzf "$MPI_PACK/mpi-root.tgz" -C /
  mkdir -p /tmp/ompi && tar xzf "$MPI_PACK/mpi-private.tgz" -C /tmp/ompi
  export PATH=/tmp/ompi/bin:$PATH LD_LIBRARY_PATH=/tmp/ompi/lib:${LD_LIBRARY_PATH:-}
fi
mpi=(mpirun --allow-run-as-root --bind-to none --mca btl self,vader --mca pml ob1
     --mca mtl ^ofi,psm2 --mca osc ^ucx -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH)
# name generator eps engine
cases=("uniform2d-50m-s5000 uniform:2:50000000 0.005642 lbjoin"
       "expo16d-4m-s500 expo:16:4000000 0.0420 meta-16q")
for c in "${cases[@]}"; do
  read -r name spec eps engine <<<"$c"
  [[ -n ${MPI_CASES:-} && ,$MPI_CASES, != *,$name,* ]] && continue
  extra=()
  [[ $spec == expo:* ]] && extra=(--paper)
  # One GPU: a join left to itself would spread over every visible device.
  "$binary" join --generate "$spec" "${extra[@]}" --eps "$eps" --engine "$engine" --format count --devices 0 \
    --json --repeat 2 > "$out/$name-1gpu.json"
  for ranks in "$@"; do
    "${mpi[@]}" -np "$ranks" "$binary" mpi-join --generate "$spec" "${extra[@]}" --eps "$eps" \
      --engine "$engine" --format count --json > "$out/$name-np$ranks.json" 2> "$out/$name-np$ranks.err"
    echo "$name np $ranks: exit $?"
  done
done
python3 - "$out" "$@" <<'PY'
import json, sys, glob, os
out, ranks = sys.argv[1], sys.argv[2:]
for one in sorted(glob.glob(os.path.join(out, "*-1gpu.json"))):
    name = os.path.basename(one)[:-len("-1gpu.json")]
    base = json.loads(open(one).read().strip().splitlines()[-1])
    t1 = min(base["run_seconds"])
    print(f"{name}: 1 GPU {t1:.3f} s (runs {base['run_seconds']}), {base['pairs']} pairs ({base['engine']}), stages {base['stages']}")
    for r in ranks:
        try:
            m = json.loads(open(os.path.join(out, f"{name}-np{r}.json")).read().strip().splitlines()[-1])
        except Exception as e:
            print(f"  np {r}: no result ({e})"); continue
        join = max(p["join_seconds"] for p in m["per_rank"])
        print(f"  np {r}: pairs {'equal' if m['pairs'] == base['pairs'] else 'DIFFER ' + str(m['pairs'])},"
              f" slowest rank's join {join:.3f} s ({t1 / join:.2f}x), stages {m['seconds']},"
              f" halo {m['halo_fraction']:.4f}, imbalance {m['imbalance_seconds']:.3f}")
        for k, p in enumerate(m["per_rank"]):
            print(f"    rank {k} (device {p['device']}): {p['points']} points + {p['halo']} halo,"
                  f" join {p['join_seconds']:.3f} s, stages {p.get('stages')}")
PY
