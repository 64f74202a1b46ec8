# shellcheck shell=bash
# Samplers of the GPU host beside a measuring run (scripts/gpu-host/ab-run.sh,
# ab-start.sh), so that a slow or noisy arm can be told apart as host
# contention, GPU clocks or neither:
#   DIR/top.log  every 2 s, the machine's CPU line and the processes over 3%
#                of a core (filtered as it goes, so a run collected while it
#                still runs carries a small, complete file);
#   DIR/gpu.csv  every 0.5 s: SM and memory clocks, power, utilisation and
#                temperature.
# A host without top or nvidia-smi gets a one-line note in that file instead.

HOST_SAMPLER_PIDS=()

# start_host_samplers DIR
start_host_samplers() {
  local dir=$1
  HOST_SAMPLER_PIDS=()
  if command -v top > /dev/null; then
    # top's own PID, so that stopping it ends the filter too (it sees EOF).
    top -b -d 2 -c -w 250 > >(awk '/^top -|^%Cpu/ {print; fflush(); next}
      $9 + 0 >= 3 {print; fflush()}' > "$dir/top.log") 2>&1 &
    HOST_SAMPLER_PIDS+=($!)
  else
    echo "no top on this host" > "$dir/top.log"
  fi
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,utilization.gpu,temperature.gpu \
      --format=csv,noheader -lms 500 > "$dir/gpu.csv" 2>&1 &
    HOST_SAMPLER_PIDS+=($!)
  else
    echo "no nvidia-smi on this host" > "$dir/gpu.csv"
  fi
}

# stop_host_samplers: ends the samplers start_host_samplers started.
stop_host_samplers() {
  (( ${#HOST_SAMPLER_PIDS[@]} == 0 )) && return 0
  kill "${HOST_SAMPLER_PIDS[@]}" 2> /dev/null || true
  wait "${HOST_SAMPLER_PIDS[@]}" 2> /dev/null || true
  HOST_SAMPLER_PIDS=()
}
