#!/usr/bin/env bash
# Collect one clusterdx bundle per node with srun, into a folder every node can write (a shared
# file system). Run it inside an allocation (sbatch / salloc: every node of the job), or attach
# to a running job with --jobid, or pass your own srun options after --srun.
#
#   deploy/slurm/collect.sh [-o DIR] [--jobid ID] [--container-image IMAGE | --container-name NAME]
#                           [--container-mounts MOUNTS] [--srun "OPTS"] [-- COLLECT_OPTIONS...]
#
#   -o DIR                where the bundles go (default: ./clusterdx-<job id>-<UTC time>), one
#                         <hostname>.tar.gz per node (<hostname>-container.tar.gz in a container)
#   --jobid ID            collect on the nodes of job ID while it runs (srun --jobid ID --overlap)
#   --container-image IMG collect inside the job's Pyxis/Enroot container (srun --container-image),
#                         so the bundle shows what the job sees; the image must hold clusterdx,
#                         or mount a venv that does and set CLUSTERDX to its clusterdx
#   --container-name NAME reuse the job's named Pyxis container instead of an image
#   --container-mounts M  extra Pyxis mounts; DIR is always mounted at the same path
#   --srun "OPTS"         more srun options, word-split (e.g. "-p batch -N 4" outside a job)
#   --diagnose            each node also diagnoses its own bundle where it was collected, into
#                         <hostname>[-container].report.json beside it; then reduce them with
#                         `clusterdx fleet DIR` (reports are read, bundles are not parsed again)
#   -- OPTIONS            passed to clusterdx collect (--process-name python --heavy perf-stat ...)
#
# Environment: CLUSTERDX (default: clusterdx) is the command run on each node; SRUN (default:
# srun). Run a host pass and a container pass into the same DIR, then diagnose each pair:
#   clusterdx diagnose DIR/node1-container.tar.gz --baseline DIR/node1.tar.gz
set -euo pipefail

srun_cmd=${SRUN:-srun}
clusterdx=${CLUSTERDX:-clusterdx}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
out=""
jobid=""
image=""
cname=""
mounts=""
srun_extra=""
diagnose=0
collect_args=()

usage() { sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
    case "$1" in
        -o|--output) out=$2; shift 2 ;;
        --jobid) jobid=$2; shift 2 ;;
        --container-image) image=$2; shift 2 ;;
        --container-name) cname=$2; shift 2 ;;
        --container-mounts) mounts=$2; shift 2 ;;
        --srun) srun_extra=$2; shift 2 ;;
        --diagnose) diagnose=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; collect_args=("$@"); break ;;
        *) echo "collect.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

job=${jobid:-${SLURM_JOB_ID:-nojob}}
out=${out:-$PWD/clusterdx-$job-$stamp}
mkdir -p "$out"
out=$(cd "$out" && pwd)

args=(--ntasks-per-node=1 --kill-on-bad-exit=0 --job-name=clusterdx-collect)
if [[ -n $jobid ]]; then
    # a step in someone's running job: --overlap shares its CPUs instead of waiting for them
    args+=(--jobid="$jobid" --overlap)
elif [[ -n ${SLURM_JOB_ID:-} ]]; then
    args+=(--overlap)
    [[ -n ${SLURM_JOB_NUM_NODES:-${SLURM_NNODES:-}} ]] && args+=(-N "${SLURM_JOB_NUM_NODES:-$SLURM_NNODES}")
fi
suffix=""
if [[ -n $image || -n $cname ]]; then
    [[ -n $image ]] && args+=(--container-image="$image")
    [[ -n $cname ]] && args+=(--container-name="$cname")
    args+=(--container-mounts="$out:$out${mounts:+,$mounts}")
    suffix="-container"
fi
# shellcheck disable=SC2206  # --srun is word-split on purpose
[[ -n $srun_extra ]] && args+=($srun_extra)

echo "collect.sh: $srun_cmd ${args[*]} -> $out" >&2
# $(hostname) must be evaluated on each node, hence the small shell there; every value is
# passed as an argument, never pasted into the script
# with --diagnose the node diagnoses its bundle at once (exit 0 whatever it finds: the report
# says it; a failure to diagnose leaves the bundle for `clusterdx fleet` to read instead)
"$srun_cmd" "${args[@]}" bash -c \
    'b="$3/$(hostname)$4"; "$2" collect --quiet -o "$b.tar.gz" "${@:5}" || exit $?
     if [ "$1" = 1 ]; then "$2" diagnose "$b.tar.gz" --for-fleet -o "$b.report.json" >/dev/null \
         || echo "collect.sh: $(hostname): diagnose failed; fleet will read the bundle" >&2; fi' \
    clusterdx-collect "$diagnose" "$clusterdx" "$out" "$suffix" "${collect_args[@]}"
echo "collect.sh: bundles in $out" >&2
ls "$out"
