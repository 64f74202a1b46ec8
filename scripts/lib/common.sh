# shellcheck shell=bash
# Shared helpers for the scripts in scripts/. Source it; do not run it.
#
# Paths (override through the environment):
#   VLLM_DIR    the upstream checkout the series is applied to   (default: ./vllm)
#   VENV_DIR    the build venv                                   (default: ./.venv)
#   DSL_CACHE   downloads (sdists, wheels)                       (default: ~/.cache/vllm-dsl)
#   PATCH_DIR   the series                                       (default: ./patches)
#   RESOLUTIONS_ROOT  recorded rebase resolutions, one dir per version (./rebase-resolutions)
#   VARIANTS_ROOT     exported rebased series, one dir per version    (./patches-variants)

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VLLM_DIR=${VLLM_DIR:-$ROOT/vllm}
VENV_DIR=${VENV_DIR:-$ROOT/.venv}
DSL_CACHE=${DSL_CACHE:-$HOME/.cache/vllm-dsl}
PATCH_DIR=${PATCH_DIR:-$ROOT/patches}
RESOLUTIONS_ROOT=${RESOLUTIONS_ROOT:-$ROOT/rebase-resolutions}
VARIANTS_ROOT=${VARIANTS_ROOT:-$ROOT/patches-variants}
export PIP_DISABLE_PIP_VERSION_CHECK=1

# Committer identity for commits made inside vllm/ (base import, git am).
export GIT_COMMITTER_NAME=${GIT_COMMITTER_NAME:-vllm-dsl tooling}
export GIT_COMMITTER_EMAIL=${GIT_COMMITTER_EMAIL:-vllm-dsl@localhost}

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# usage_from_header FILE: print the leading comment block of a script (its --help).
usage_from_header() {
  sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "$1"
}

# handle_help "$@": print the script's header and exit when asked for --help.
handle_help() {
  local arg
  for arg in "$@"; do
    case "$arg" in -h|--help) usage_from_header "$0"; exit 0 ;; esac
  done
}

# help_or_usage "$@": for a script whose first argument is required (a run's
# NAME): print its header and exit 0 when that argument is -h/--help, exit 2
# when there is none. Later arguments are the script's to pass on.
help_or_usage() {
  if [[ "${1:-}" == "-h" || "${1:-}" == "--help" || $# -eq 0 ]]; then
    usage_from_header "$0"
    [[ $# -eq 0 ]] && exit 2 || exit 0
  fi
}

# check_run_name SCRIPT NAME: a GPU-host run's NAME names a folder and a
# tarball, so letters, digits, '.', '_' and '-' only (else exit 2).
check_run_name() {
  [[ "$2" =~ ^[A-Za-z0-9._-]+$ ]] || {
    echo "$1: NAME '$2' must be letters, digits, '.', '_' or '-'" >&2; exit 2; }
}

# load_lock [TARGET]: export LOCK_* variables from vllm.lock.toml.
load_lock() {
  local out
  out=$(python3 "$ROOT/scripts/lib/lock.py" shell "$@") || die "cannot read vllm.lock.toml"
  eval "$out"
}

# sha256_check FILE SHA256: fail with a clear message when the file does not match.
sha256_check() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [[ "$got" == "$2" ]] || die "sha256 mismatch for $1: expected $2, got $got (delete it to re-download)"
}

# pip_quiet ARGS...: pip install without the registry mirror's noise.
pip_quiet() {
  "$VENV_DIR/bin/python" -m pip install -q "$@" 2>&1 \
    | grep -vE "^WARNING: Location '.*' is ignored" || true
  return "${PIPESTATUS[0]}"
}

# find_python NAME: print the path of a working NAME (python3.12, ...): the one on PATH,
# else a pyenv-installed one (pyenv's shim for a version that is installed but not
# selected exists on PATH and fails). Returns 1 when there is none.
find_python() {
  local name=$1 p
  if p=$(command -v "$name" 2>/dev/null) && "$p" -c 'import venv, ensurepip' >/dev/null 2>&1; then
    echo "$p"; return 0
  fi
  for p in "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/"$name"; do
    if [[ -x "$p" ]] && "$p" -c 'import venv, ensurepip' >/dev/null 2>&1; then echo "$p"; return 0; fi
  done
  return 1
}

# venv_build_file: what the build venv was made for ("target=T python=P torch=SPEC").
venv_build_file() { echo "$VENV_DIR/dsl-build.txt"; }

# venv_target: the target the build venv was made for (cpu, cuda), or "" when unknown.
venv_target() { sed -nE 's/^target=([^ ]+).*/\1/p' "$(venv_build_file)" 2>/dev/null || true; }

# require_cpu_venv WHAT: fail unless the build venv is a CPU build (WHAT runs CPU tests).
require_cpu_venv() {
  local t
  t=$(venv_target)
  [[ -z "$t" || "$t" == cpu ]] \
    || die "$1 runs on CPU, but the build venv $VENV_DIR is a --target $t build: run scripts/build.sh --target cpu (it rebuilds the venv), or set VENV_DIR to a CPU venv"
}

# venv_torch_version: the installed torch distribution's version in the build venv
# (pip's version: "2.13.0+cpu", "2.13.0"; torch.__version__ may add a CUDA label).
venv_torch_version() {
  "$VENV_DIR/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true
}

# torch_version_of SPEC: the version a "torch==V" spec pins (V, local label included).
torch_version_of() { sed -nE 's/^torch==([^ ;]+)$/\1/p' <<<"$1"; }

# ensure_venv PYTHON TORCH_SPEC TARGET: make the build venv a PYTHON venv with exactly
# TORCH_SPEC's torch and the sdist's build tools, for TARGET (recorded in the venv). A
# venv made for another target, python or torch (a target switch) is removed and
# rebuilt; its pip downloads stay in pip's cache.
ensure_venv() {
  local python=$1 torch_spec=$2 target=$3 want have exe torch_want torch_have pyver
  want="target=$target python=$python torch=$torch_spec"
  torch_want=$(torch_version_of "$torch_spec")
  [[ -n "$torch_want" ]] || die "vllm.lock.toml: targets.$target.torch must be 'torch==VERSION', not '$torch_spec'"
  if [[ -x "$VENV_DIR/bin/python" ]]; then
    have=$(cat "$(venv_build_file)" 2>/dev/null || true)
    if [[ -z "$have" ]]; then
      # Made by an older build.sh: keep it when its python and torch are the lock's.
      pyver=$("$VENV_DIR/bin/python" -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
      torch_have=$(venv_torch_version)
      have="target=? python=${pyver:-?} torch=torch==${torch_have:-?}"
      if [[ "$pyver" == "$python" && "$torch_have" == "$torch_want" ]]; then have=$want; fi
    fi
    if [[ "$have" != "$want" ]]; then
      log "the venv $VENV_DIR was made for '$have'; removing it to make one for '$want'"
      rm -rf "$VENV_DIR"
    fi
  fi
  if [[ ! -x "$VENV_DIR/bin/python" ]]; then
    exe=$(find_python "$python") \
      || die "$python not found (the build venv of --target $target needs it, as vllm.lock.toml says): install it (e.g. 'pyenv install ${python#python}', 'apt install $python-venv' or 'uv python install ${python#python}') and run again"
    log "creating venv $VENV_DIR ($exe)"
    "$exe" -m venv "$VENV_DIR"
    pip_quiet --upgrade pip packaging
  fi
  torch_have=$(venv_torch_version)
  if [[ "$torch_have" != "$torch_want" ]]; then
    log "installing $torch_spec"
    pip_quiet "$torch_spec"
    torch_have=$(venv_torch_version)
    [[ "$torch_have" == "$torch_want" ]] \
      || die "pip installed torch '${torch_have:-nothing}' for '$torch_spec' (want exactly $torch_want): check pip's index settings (pip config list), e.g. a find-links or index that serves another torch build, then run again"
  fi
  "$VENV_DIR/bin/python" -c "import setuptools_scm, setuptools_rust" 2>/dev/null \
    || pip_quiet setuptools_scm setuptools_rust wheel
  echo "$want" >"$(venv_build_file)"
}

# ensure_build_venv [TARGET]: ensure_venv with TARGET's python and torch from the lock
# (default: $DSL_BUILD_TARGET, set by apply_and_build.sh, else cpu).
ensure_build_venv() {
  local target=${1:-${DSL_BUILD_TARGET:-cpu}} python torch
  python=$(python3 "$ROOT/scripts/lib/lock.py" get "targets.$target.python") || die "cannot read targets.$target.python from vllm.lock.toml"
  torch=$(python3 "$ROOT/scripts/lib/lock.py" get "targets.$target.torch") || die "cannot read targets.$target.torch from vllm.lock.toml"
  ensure_venv "$python" "$torch" "$target"
}

# fetch_sdist VERSION [SHA256]: download vllm's sdist into the cache and verify it; print
# its path. Without SHA256 the lock's pin is used (the pinned version or a [releases]
# entry); a version the lock does not pin is refused before any download, unless
# DSL_ALLOW_UNPINNED=1 (then its hash is printed, unverified).
fetch_sdist() {
  local version=$1 sha=${2:-} dir="$DSL_CACHE/dl" file
  file="$dir/vllm-$version.tar.gz"
  if [[ -z "$sha" ]]; then
    sha=$(python3 "$ROOT/scripts/lib/lock.py" sdist-sha256 "$version" 2>/dev/null) || sha=""
  fi
  if [[ -z "$sha" && "${DSL_ALLOW_UNPINNED:-0}" != 1 ]]; then
    die "the vllm $version sdist is not pinned in vllm.lock.toml: add [releases.\"$version\".sdist] with the sha256 the package registry publishes for vllm-$version.tar.gz, or pass --allow-unpinned to download it unverified"
  fi
  mkdir -p "$dir"
  if [[ ! -f "$file" ]]; then
    # The sdist's metadata step imports torch: any build venv will do; a missing one
    # is made for the target being built (apply_and_build.sh sets DSL_BUILD_TARGET).
    [[ -x "$VENV_DIR/bin/python" ]] && "$VENV_DIR/bin/python" -c 'import torch' 2>/dev/null || ensure_build_venv
    log "downloading vllm $version sdist"
    # The sdist's metadata step imports torch and must report exactly $version;
    # the empty target keeps it from adding platform requirements.
    VLLM_TARGET_DEVICE=empty VLLM_VERSION_OVERRIDE=$version \
      "$VENV_DIR/bin/python" -m pip download -q --no-deps --no-binary :all: \
      --no-build-isolation -d "$dir" "vllm==$version" 2>&1 \
      | grep -vE "^WARNING: Location '.*' is ignored" >&2 || true
    [[ -f "$file" ]] || die "could not download the vllm $version sdist (is the package registry reachable?)"
  fi
  if [[ -n "$sha" ]]; then
    sha256_check "$file" "$sha"
  else
    warn "vllm $version sdist is not pinned in vllm.lock.toml (--allow-unpinned): sha256 $(sha256sum "$file" | cut -d' ' -f1), unverified"
  fi
  echo "$file"
}

# fetch_wheel PACKAGE VERSION FILENAME SHA256: download a precompiled wheel; print its path.
fetch_wheel() {
  local package=$1 version=$2 filename=$3 sha=$4 dir="$DSL_CACHE/dl"
  mkdir -p "$dir"
  if [[ ! -f "$dir/$filename" ]]; then
    log "downloading $package==$version ($filename)"
    python3 -m pip download -q --no-deps --only-binary :all: \
      --python-version 3.12 --platform manylinux_2_28_x86_64 \
      -d "$dir" "$package==$version" 2>&1 \
      | grep -vE "^WARNING: Location '.*' is ignored" >&2 || true
    [[ -f "$dir/$filename" ]] || die "could not download $filename (is the package registry reachable?)"
  fi
  sha256_check "$dir/$filename" "$sha"
  echo "$dir/$filename"
}

# kill_tree PID: SIGTERM PID and every process below it (children first), e.g. a
# background subshell and the pytest and servers it started.
kill_tree() {
  local child
  for child in $(ps -o pid= --ppid "$1" 2>/dev/null || true); do kill_tree "$child"; done
  kill "$1" 2>/dev/null || true
}

# On the GPU host (scripts/gpu-host/), from the checkout's root; NAME is the
# calling script's name for its messages.
# require_staged_root NAME ROOT: ROOT/env.sh exists, else exit 1 saying so.
require_staged_root() {
  [[ -f "$2/env.sh" ]] || {
    echo "$1: no $2/env.sh: stage the bundle first (docs/gpu-host.md)" >&2; exit 1; }
}

# require_carried_prompts NAME: .gpu-bundles/prompts was carried, else exit 1.
require_carried_prompts() {
  [[ -d .gpu-bundles/prompts ]] || {
    echo "$1: no .gpu-bundles/prompts: carry it (carry=[\".gpu-bundles/prompts\"])" >&2
    exit 1
  }
}

# stage_kept_rows NAME ROOT: the kept distillation rows of the checkout
# (ROWS_DIR, default benchmarks/gpu-rows: self-rows-*.pt.xz, tracked, checked
# against its SHA256SUMS) unpacked into ROOT/models/, where distill.py uses
# them instead of generating the target's continuations (~2-5 min of the GPU).
# They travel with every call in the tree: nothing is carried for them. A
# kept file that does not unpack to its sha256 is one line on stderr and is
# not staged (distill.py then generates its rows); the chain goes on.
stage_kept_rows() {
  local kept=${ROWS_DIR:-benchmarks/gpu-rows} out
  [[ -n $(compgen -G "$kept/self-rows-*.pt.xz") ]] || return 0
  if out=$(python3 "$ROOT/scripts/lib/offline_bundle.py" stage-rows "$kept" "$2/models" 2>&1); then
    echo "$1: kept distillation rows staged: $out"
  else
    echo "$1: ${out#error: }" >&2
  fi
}

# start_chain NAME LOG_DIR CHAIN [ARGS...]: a build chain's start script
# (scripts/gpu-host/CHAIN, which returns once its chain runs in its own
# process session; output in LOG_DIR/<CHAIN less .sh>.log). Where it fails:
# its log's tail and one line on stderr, exit status 1.
start_chain() {
  local name=$1 logs=$2 chain=$3 log
  shift 3
  log="$logs/${chain%.sh}.log"
  if ! bash "$ROOT/scripts/gpu-host/$chain" "$@" > "$log" 2>&1; then
    tail -n 5 "$log" >&2
    echo "$name: $chain failed (log: $log)" >&2
    exit 1
  fi
}

# start_chain_and_suite NAME LOG_DIR LAYERS CHAIN_DONE CHAIN [ARGS...]:
# start_chain, then start_suite_beside; nothing more where the chain's start
# fails.
start_chain_and_suite() {
  local name=$1 logs=$2 layers=$3 done=$4 chain=$5
  shift 5
  start_chain "$name" "$logs" "$chain" "$@"
  start_suite_beside "$name" "$logs" "$layers" "$done"
}

# start_chain_alone NAME LOG_DIR CHAIN_DONE CHAIN [ARGS...]: start_chain with
# no GPU suite beside it (a session whose GPU code is unchanged since its
# suite's last whole run): LOG_DIR/after.done at once (with after.skipped
# saying why), and LOG_DIR/go once CHAIN_DONE exists and the GPU is quiet,
# the same markers start_suite_beside leaves. The markers of an earlier run
# go first; nothing more where the chain's start fails.
start_chain_alone() {
  local name=$1 logs=$2 done=$3
  shift 3
  rm -f "$logs"/{go,gpu-apps-at-go.csv,after.done,after.skipped}
  start_chain "$name" "$logs" "$@"
  echo "no GPU suite beside the chain ($name)" > "$logs/after.skipped"
  touch "$logs/after.done"
  setsid bash "$ROOT/scripts/gpu-host/go-when-quiet.sh" "$logs/go" --after "$done" \
    < /dev/null > /dev/null 2>&1 &
  echo "$name: the chain started, no suite; go: $logs/go"
}

# env_bytes NAME DEFAULT: the environment's NAME (DEFAULT where unset), a
# number of bytes; one error naming NAME otherwise. The device call's limit
# (CALL_LIMIT_BYTES, 64 MiB) is read this way by call-size.sh and
# pack-offline.sh --cap fit.
CALL_LIMIT_DEFAULT=67108864
env_bytes() {
  local v=${!1:-$2}
  [[ "$v" =~ ^[0-9]+$ ]] || die "$1 '$v' is not a number of bytes"
  echo "$v"
}

# ab_arm_options ARMS: abab.py's --arm-options JSON for the labels the
# comma-separated ARMS use, one hook per label: +t times the host's calls
# (ab_hooks.HostTimer); +u also unprices the DSL loop's stop (StepCostsOff:
# the loop never stops); +v also closes the device loops (DeviceLoopOff:
# host-launched draft steps); +f lets only the served width's batch size of
# one request forget its evidence (ServedForgetsOneRequestOnly); +e logs the
# served width's window tests and block counts, deciding nothing differently
# (ServedWidthExplains); +s also explores the narrower width fast until its
# slot is priced (ServedPricesSlotFirst, with +e's logging); +d is +s with
# the draft step priced at its start-up timing (ServedPricesDraftStepAtStartUp).
# Each caller checks which labels it allows.
ab_arm_options() {
  local label out=''
  local -A hook=(
    [t]='{"engine": {"worker_extension_cls": "ab_hooks.HostTimer"}, "rpc": "host_timer_on", "probe": "host_timer_read"}'
    [u]='{"engine": {"worker_extension_cls": "ab_hooks.StepCostsOffTimer"}, "rpc": ["dsl_unprice_draft_steps", "host_timer_on"], "probe": "host_timer_read"}'
    [v]='{"engine": {"worker_extension_cls": "ab_hooks.LoopOffUnpricedTimer"}, "rpc": ["dsl_close_device_loops", "dsl_unprice_draft_steps", "host_timer_on"], "probe": "host_timer_read"}'
    [f]='{"engine": {"worker_extension_cls": "ab_hooks.ServedForgetsOneRequestOnlyTimer"}, "rpc": ["dsl_served_forgets_one_request_only", "host_timer_on"], "probe": "host_timer_read"}'
    [e]='{"engine": {"worker_extension_cls": "ab_hooks.ServedWidthExplainsTimer"}, "rpc": ["dsl_served_width_explains", "host_timer_on"], "probe": "host_timer_read"}'
    [s]='{"engine": {"worker_extension_cls": "ab_hooks.ServedPricesSlotFirstExplainsTimer"}, "rpc": ["dsl_served_prices_slot_first", "dsl_served_width_explains", "host_timer_on"], "probe": "host_timer_read"}'
    [d]='{"engine": {"worker_extension_cls": "ab_hooks.ServedPricesAtStartUpExplainsTimer"}, "rpc": ["dsl_served_prices_draft_step_at_start_up", "dsl_served_prices_slot_first", "dsl_served_width_explains", "host_timer_on"], "probe": "host_timer_read"}'
  )
  for label in t u v f e s d; do
    if [[ ",$1," == *"+$label,"* ]]; then out+="${out:+, }\"$label\": ${hook[$label]}"; fi
  done
  echo "{$out}"
}

# unpack_ab_run TGZ DEST NAME: here, an A/B run's tarball as
# scripts/gpu-host/ab-collect.sh returns it, laid into DEST as a results
# folder keeps it: abab.json, abab.log, gpu.csv and top.log gzipped as
# NAME-<file>.gz, args and rc as NAME-<file>, and any graphs the run wrote
# (dot/*.dot, e.g. ab_hooks.dump_loop_graphs') as <file>.dot.gz.
unpack_ab_run() {
  local tgz=$1 dest=$2 name=$3 tmp x
  tmp=$(mktemp -d)
  tar xzf "$tgz" -C "$tmp"
  gzip -c "$tmp/abab.json" > "$dest/$name-abab.json.gz"
  gzip -c "$tmp/abab.log" > "$dest/$name-abab.log.gz"
  for x in gpu.csv top.log; do
    [[ -f "$tmp/$x" ]] && gzip -c "$tmp/$x" > "$dest/$name-$x.gz"
  done
  for x in args rc; do
    [[ -f "$tmp/$x" ]] && cp "$tmp/$x" "$dest/$name-$x"
  done
  for x in "$tmp"/dot/*.dot; do
    [[ -f "$x" ]] && gzip -c "$x" > "$dest/$(basename "$x").gz"
  done
  rm -rf "$tmp"
}

# start_suite_beside NAME LOG_DIR LAYERS CHAIN_DONE: on a staged GPU host, the
# GPU suite's engine groups in their own process session beside a build chain
# (scripts/gpu-host/beside-proxies.sh, beside-small.sh), from the checkout's
# root. suite.sh runs on SUITE_ROOT (default GPU_HOST_ROOT, /tmp/gpuhost) with
# SUITE_DRAFT_LAYERS (default LAYERS), SUITE_ARGS (default: the kernel files
# left out), SUITE_TIMEOUT_S (480), DSL_GPU_PARALLEL (15); its engine workers
# are ended with it. Then, where .gpu-bundles/intree is carried, the kernel
# files and the in-tree CUDA tests (after-suite.sh, their logs and .rc files in
# LOG_DIR). LOG_DIR/after.done once that has ended (or at once, with
# after.skipped, where nothing was carried); LOG_DIR/go once CHAIN_DONE and
# after.done exist and the GPU is quiet: the measuring run's AB_WAIT_FILE.
# The markers of an earlier run in LOG_DIR go first. after-suite.sh runs in
# the suite root's environment (its env.sh), as suite.sh does.
start_suite_beside() {
  local name=$1 logs=$2 layers=$3 done=$4 here kernel_files
  here="$ROOT/scripts/gpu-host"
  kernel_files=$(bash "$here/after-suite.sh" --ignores)
  mkdir -p "$logs/suite-out"
  rm -f "$logs"/{go,gpu-apps-at-go.csv,suite.rc,after.done,after.skipped,kernels.rc,intree.rc}
  OUT=$logs/suite-out GPU_HOST_ROOT=${SUITE_ROOT:-${GPU_HOST_ROOT:-/tmp/gpuhost}} \
    DSL_GPU_PARALLEL=${DSL_GPU_PARALLEL:-15} SUITE_DRAFT_LAYERS=${SUITE_DRAFT_LAYERS:-$layers} \
    SUITE_TIMEOUT_S=${SUITE_TIMEOUT_S:-480} PYTEST_ARGS=${SUITE_ARGS-$kernel_files} \
    LOGS=$logs HERE=$here \
    setsid bash -c 'bash "$HERE/suite.sh" > "$LOGS/suite.out" 2>&1; echo $? > "$LOGS/suite.rc"
      pkill -f "tests/gpu/engine_worke[r]"; sleep 3; pkill -9 -f "tests/gpu/engine_worke[r]"
      if [[ -d .gpu-bundles/intree/tests ]]; then
        # shellcheck disable=SC1091
        [[ -f "$GPU_HOST_ROOT/env.sh" ]] && source "$GPU_HOST_ROOT/env.sh"
        bash "$HERE/after-suite.sh" "$LOGS" 150 > "$LOGS/after-suite.out" 2>&1
      else
        echo "no .gpu-bundles/intree carried: kernel files and in-tree tests not run" \
          > "$LOGS/after.skipped"
      fi
      touch "$LOGS/after.done"' \
    < /dev/null > /dev/null 2>&1 &
  setsid bash "$here/go-when-quiet.sh" "$logs/go" --after "$done" --after "$logs/after.done" \
    < /dev/null > /dev/null 2>&1 &
  echo "$name: the GPU suite and the chain started; go: $logs/go"
}

# git_vllm ARGS...: git inside the vllm/ checkout.
git_vllm() { git -C "$VLLM_DIR" "$@"; }

# require_vllm_repo: fail unless vllm/ has been synced.
require_vllm_repo() {
  [[ -e "$VLLM_DIR/.git" ]] || die "$VLLM_DIR is not synced: run scripts/sync.sh first"
}

# require_clean_vllm: fail when vllm/ has uncommitted changes (tracked files).
require_clean_vllm() {
  require_vllm_repo
  git_vllm diff --quiet HEAD -- || die "$VLLM_DIR has uncommitted changes: commit or stash them first"
  [[ ! -d "$VLLM_DIR/.git/rebase-apply" ]] || die "a git am is in progress in $VLLM_DIR: run 'git -C vllm am --abort'"
}

# series_patches: the patch files in series order (absolute paths).
series_patches() {
  local line
  [[ -f "$PATCH_DIR/series" ]] || return 0
  while IFS= read -r line || [[ -n "$line" ]]; do
    line=${line%%#*}; line=${line//[[:space:]]/}
    [[ -z "$line" ]] && continue
    [[ -f "$PATCH_DIR/$line" ]] || die "patches/series names $line, which does not exist"
    echo "$PATCH_DIR/$line"
  done <"$PATCH_DIR/series"
}

# import_sdist_as_commit TARBALL REPO_DIR TAG DESCRIBE: commit an sdist's files as a
# root commit tagged TAG in REPO_DIR, through a temporary index and work tree (REPO_DIR's
# own work tree, branches and ignored build outputs are untouched). Author and dates are
# fixed, so every machine gets the same commit id for the same sdist.
import_sdist_as_commit() {
  local tarball=$1 repo=$2 tag=$3 describe=$4 tmp top tree commit fresh=0
  tmp=$(mktemp -d)
  tar xzf "$tarball" -C "$tmp" --no-same-owner
  top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d | head -1)
  # Packaging by-products that are not part of the upstream git tree.
  rm -rf "$top/PKG-INFO" "$top"/*.egg-info
  if [[ ! -d "$repo/.git" ]]; then
    mkdir -p "$repo"
    git -C "$repo" init -q -b "_import"
    fresh=1
  fi
  (
    export GIT_DIR="$repo/.git" GIT_WORK_TREE="$top" GIT_INDEX_FILE="$tmp/index"
    git add -A -f .
    tree=$(git write-tree)
    commit=$(GIT_AUTHOR_NAME="vLLM upstream" GIT_AUTHOR_EMAIL="vllm-upstream@localhost" \
      GIT_COMMITTER_NAME="vLLM upstream" GIT_COMMITTER_EMAIL="vllm-upstream@localhost" \
      GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
      git commit-tree "$tree" -m "vLLM $describe (registry sdist)" \
        -m "Imported from $(basename "$tarball") by scripts/sync.sh.")
    git tag -f "$tag" "$commit" >/dev/null
  )
  rm -rf "$tmp"
  if [[ $fresh == 1 ]]; then
    git -C "$repo" checkout -q --detach "$tag"
    git -C "$repo" branch -D _import >/dev/null 2>&1 || true
  fi
}

# import_git_ref URL REF REPO_DIR TAG: fetch REF from the upstream remote and tag it TAG.
# Returns non-zero (quietly) when the remote is unreachable.
import_git_ref() {
  local url=$1 ref=$2 repo=$3 tag=$4
  timeout 30 git ls-remote --exit-code "$url" "$ref" >/dev/null 2>&1 || return 1
  if [[ ! -d "$repo/.git" ]]; then mkdir -p "$repo"; git -C "$repo" init -q -b "_import"; fi
  timeout 600 git -C "$repo" fetch -q --depth 1 "$url" "refs/tags/$ref:refs/tags/$tag" 2>/dev/null \
    || timeout 600 git -C "$repo" fetch -q --depth 1 "$url" "$ref" || return 1
  git -C "$repo" tag -f "$tag" FETCH_HEAD >/dev/null 2>&1 || true
  git -C "$repo" checkout -q --detach "$tag"
}

# materialize_base VERSION_OR_REF TAG REPO_DIR [SDIST_SHA256]: make TAG exist in REPO_DIR,
# from the upstream git remote when reachable, else from the registry sdist.
materialize_base() {
  local what=$1 tag=$2 repo=$3 sha=${4:-} ref
  if [[ -d "$repo/.git" ]] && git -C "$repo" rev-parse -q --verify "refs/tags/$tag" >/dev/null; then
    return 0
  fi
  ref=$what
  [[ "$what" =~ ^[0-9]+\.[0-9]+\.[0-9]+ ]] && ref="v$what"
  if [[ "${DSL_OFFLINE_GIT:-0}" != 1 ]] && import_git_ref "$LOCK_GIT_URL" "$ref" "$repo" "$tag"; then
    log "base $tag from $LOCK_GIT_URL ($ref)"
    return 0
  fi
  [[ "$what" =~ ^[0-9]+\.[0-9]+\.[0-9]+([a-z0-9.]*)$ ]] \
    || die "the upstream git remote is unreachable and '$what' is not a release version with a registry sdist"
  log "upstream git remote unreachable: using the registry sdist of vllm $what"
  local tarball
  tarball=$(fetch_sdist "$what" "$sha")
  import_sdist_as_commit "$tarball" "$repo" "$tag" "v$what"
}

# export_series REPO BASE HEAD OUT_DIR: write BASE..HEAD as normalized patches + series
# into OUT_DIR. Normalized: zero commit ids, full blob ids, no signature, fixed naming,
# so re-exporting an unchanged branch writes identical bytes.
export_series() {
  local repo=$1 base=$2 head=$3 out=$4
  mkdir -p "$out"
  rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch "$out/series"
  git -C "$repo" -c core.abbrev=12 -c diff.noprefix=false -c diff.mnemonicPrefix=false \
    -c diff.renames=true -c format.signOff=false \
    format-patch -q --zero-commit --full-index --no-signature --no-cover-letter \
    --stat=80 --minimal --encoding=UTF-8 --subject-prefix=PATCH -N \
    -o "$out" "$base..$head" >/dev/null
  (cd "$out" && ls [0-9][0-9][0-9][0-9]-*.patch 2>/dev/null || true) >"$out/series"
}

# am_series REPO PATCH...: `git am --3way` the patches onto REPO's HEAD. On failure
# prints the failing patch and its conflicting files, aborts the am (REPO is left
# clean at its previous HEAD), sets AM_FAILED_PATCH to the patch's path and returns 1.
am_series() {
  local repo=$1; shift
  AM_FAILED_PATCH=""
  [[ $# -gt 0 ]] || return 0
  local out
  if out=$(git -C "$repo" am -q --3way --keep-non-patch --committer-date-is-author-date "$@" 2>&1); then
    return 0
  fi
  local next patch files
  next=$(cat "$repo/.git/rebase-apply/next" 2>/dev/null || echo 1)
  patch=${*:$next:1}
  AM_FAILED_PATCH=$patch
  files=$(git -C "$repo" diff --name-only --diff-filter=U 2>/dev/null | tr '\n' ' ')
  [[ -n "$files" ]] || files=$(grep -oE '(error: patch failed: |CONFLICT \(content\): Merge conflict in )[^ :]+' <<<"$out" \
    | sed -E 's/.* //' | sort -u | tr '\n' ' ')
  # The hunk that does not apply onto the previous patches (git apply names its line).
  local where hunk=""
  git -C "$repo" reset -q --hard HEAD  # the previous patches applied, no conflict markers
  where=$(git -C "$repo" apply --check "$patch" 2>&1 | sed -nE 's/^error: patch failed: (.+):([0-9]+)$/\1 \2/p' | head -n 1)
  if [[ -n "$where" ]]; then hunk=$(patch_hunk "$patch" ${where}); fi
  git -C "$repo" am --abort >/dev/null 2>&1 || true
  git -C "$repo" reset -q --hard
  printf 'error: patch %s does not apply\n  conflicting files: %s\n' "$(basename "$patch")" "${files:-unknown}" >&2
  # git's own errors, without its hints to continue/skip/abort the am (aborted above).
  grep -E '^(error|fatal|CONFLICT)' <<<"$out" | grep -vE 'Failed to merge in the changes|am --(continue|skip|abort)' \
    | sed 's/^/  git: /' | tail -n 6 >&2 || true
  if [[ -n "$hunk" ]]; then
    printf '  the hunk that does not apply (%s, line %s of the file before the patch):\n' ${where} >&2
    sed 's/^/    /' <<<"$hunk" | head -n 40 >&2
  fi
  return 1
}

# patch_hunk PATCH FILE LINE: the hunk of PATCH for FILE whose old range starts at LINE.
patch_hunk() {
  awk -v file="$2" -v line="$3" '
    /^diff --git / { infile = ($3 == "a/" file); on = 0; next }
    /^-- $/ { on = 0; next }
    /^@@ / { on = 0; if (infile) { split($2, r, ","); if (substr(r[1], 2) + 0 == line + 0) on = 1 } }
    on { print }' "$1"
}

# Which side changed since vLLM/'s series branch and patches/ were last in step (the
# last apply.sh or export.sh, recorded in vllm/.git/dsl-series-synced: the branch
# commit and the fingerprint of patches/ at that time).
series_sync_file() { echo "$(git_vllm rev-parse --absolute-git-dir)/dsl-series-synced"; }

# record_series_sync: note that branch $LOCK_BRANCH and patches/ are in step now.
record_series_sync() {
  { git_vllm rev-parse "refs/heads/$LOCK_BRANCH"; series_fingerprint; } >"$(series_sync_file)"
}

# series_changes BRANCH_HEAD: set SERIES_EDITED (patch files of patches/ added, changed
# or removed since the last sync; newline-separated names) and SERIES_UNEXPORTED (the
# branch's commits since then that patches/ lacks, "sha subject" lines). SERIES_KNOWN=0
# when there is no record (vllm/ applied by an older apply.sh): then the edited files
# are those with uncommitted changes in the project's git, and every commit of the
# branch that differs from patches/ counts as un-exported.
series_changes() {
  local head=$1 sync rec_head
  sync=$(series_sync_file)
  SERIES_EDITED="" SERIES_UNEXPORTED="" SERIES_KNOWN=1
  if [[ -f "$sync" ]]; then
    rec_head=$(head -n 1 "$sync")
    SERIES_EDITED=$(diff <(tail -n +2 "$sync") <(series_fingerprint) | sed -nE 's/^[<>] [0-9a-f]+  //p' | sort -u || true)
    if [[ "$head" != "$rec_head" ]]; then
      if git_vllm cat-file -e "$rec_head^{commit}" 2>/dev/null; then
        SERIES_UNEXPORTED=$(git_vllm cherry -v "$rec_head" "$head" "$LOCK_BASE_TAG" | sed -n 's/^+ //p')
      fi
      [[ -n "$SERIES_UNEXPORTED" ]] || SERIES_UNEXPORTED=$(git_vllm log --reverse --format='%h %s' "$LOCK_BASE_TAG..$head")
    fi
  else
    # No record: a commit counts as exported when its exported patch file is a blob the
    # project's git has seen (committed or staged once), e.g. before a pull moved patches/.
    SERIES_KNOWN=0
    SERIES_EDITED=$(git -C "$PATCH_DIR" status --porcelain -- . 2>/dev/null | sed -E 's/^...//; s#.*/##' || true)
    local tmp i blob
    local -a commits files
    tmp=$(mktemp -d)
    export_series "$VLLM_DIR" "$LOCK_BASE_TAG" "$head" "$tmp"
    mapfile -t commits < <(git_vllm rev-list --reverse "$LOCK_BASE_TAG..$head")
    mapfile -t files <"$tmp/series"
    for i in "${!commits[@]}"; do
      blob=$(git hash-object "$tmp/${files[$i]}")
      git -C "$PATCH_DIR" cat-file -e "$blob" 2>/dev/null \
        || SERIES_UNEXPORTED+="$(git_vllm log -1 --format='%h %s' "${commits[$i]}")"$'\n'
    done
    SERIES_UNEXPORTED=${SERIES_UNEXPORTED%$'\n'}
    rm -rf "$tmp"
  fi
}

# link_kernels FROM_TREE TO_TREE: symlink the ignored compiled files of one vllm checkout
# (extracted by build.sh) into another, so a second checkout imports with kernels.
link_kernels() {
  local from=$1 to=$2 f
  while IFS= read -r f; do
    mkdir -p "$(dirname "$to/$f")"
    ln -sf "$from/$f" "$to/$f"
  done < <(git -C "$from" ls-files -o -i --exclude-standard -- vllm | grep -E '\.so$|/vllm-rs$' || true)
}

# clone_series DIR: a scratch clone of vllm/ at the base tag with patches/series applied
# (the series exactly as exported, independent of vllm/'s work tree). Prints nothing.
clone_series() {
  local dir=$1
  rm -rf "$dir"
  git clone -q --no-checkout "$VLLM_DIR" "$dir"
  git -C "$dir" config user.name "vllm-dsl check"
  git -C "$dir" config user.email "check@localhost"
  git -C "$dir" checkout -q --detach "$LOCK_BASE_TAG"
  link_kernels "$VLLM_DIR" "$dir"
  local patches
  mapfile -t patches < <(series_patches)
  am_series "$dir" "${patches[@]}"
}

# tree_python ARGS...: the venv's python, for a process that imports a vLLM tree: it
# writes bytecode caches (into the tree's __pycache__/, git-ignored) even when the
# environment says PYTHONDONTWRITEBYTECODE, or every such process compiles vLLM's
# ~4,500 modules again (3 s each: 39 prefixes, the upstream tests). A pyc is used only
# while its source's mtime and size match; a checkout rewrites the files it changes.
tree_python() { env -u PYTHONDONTWRITEBYTECODE "$VENV_DIR/bin/python" "$@"; }

# upstream_pytest TREE JUNIT ARGS...: run vLLM's own tests from TREE on CPU, offline,
# with the project's CPU plugin, vendored hub configs and known-CPU-failure deselects.
upstream_pytest() {
  local tree=$1 junit=$2; shift 2
  local hf_home deselect=() line
  hf_home=$(mktemp -d)
  HF_HOME=$hf_home python3 "$ROOT/tests/upstream/seed_hf_cache.py" >/dev/null
  while IFS= read -r line || [[ -n "$line" ]]; do
    line=${line%%#*}; line=${line%"${line##*[![:space:]]}"}
    case "$line" in
      "") ;;
      --ignore=*) deselect+=("$line") ;;
      *) deselect+=(--deselect "$line") ;;
    esac
  done <"$ROOT/tests/upstream/cpu-deselect.txt"
  local rc=0
  (cd "$tree" && HF_HOME=$hf_home HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    PYTHONPATH="$tree:$ROOT/tests/upstream" \
    tree_python -m pytest -q -p no:cacheprovider -p prefix_imports -p cpu_kernel_overrides -p gc_freeze \
      --timeout=600 -rfE --junitxml="$junit" "${deselect[@]}" "$@") || rc=$?
  rm -rf "$hf_home"
  return $rc
}

# patches_match REPO BASE HEAD [SHOW]: whether exporting BASE..HEAD of REPO reproduces
# patches/ byte for byte (series and patch files: the hand-edited stack.toml is not
# exported). With SHOW, print the first SHOW lines of the difference.
patches_match() {
  local repo=$1 base=$2 head=$3 show=${4:-0} tmp rc=0
  tmp=$(mktemp -d)
  export_series "$repo" "$base" "$head" "$tmp"
  diff -r -q -x '.*' -x stack.toml "$tmp" "$PATCH_DIR" >/dev/null 2>&1 || rc=1
  if [[ $rc == 1 && $show -gt 0 ]]; then
    diff -r -u -x '.*' -x stack.toml "$PATCH_DIR" "$tmp" | head -n "$show" >&2 || true
  fi
  rm -rf "$tmp"
  return $rc
}

# patch_subject FILE: the subject of a format-patch file, unfolded, without "[PATCH]".
patch_subject() {
  git mailinfo -b /dev/null /dev/null <"$1" | sed -n 's/^Subject: //p'
}

# series_fingerprint: "sha256  name" of every patch of patches/series, in order (the
# SOURCE file of an exported variant).
series_fingerprint() {
  local p
  while IFS= read -r p; do
    printf '%s  %s\n' "$(sha256sum "$p" | cut -d' ' -f1)" "$(basename "$p")"
  done < <(series_patches)
}

# variant_check DIR: whether the exported variant in DIR (patches-variants/<version>)
# was generated from the current patches/: same number of patches, same subjects in
# order, and the same patches/ bytes (its SOURCE file). Prints every difference and
# the command that regenerates it; returns 1 when stale.
variant_check() {
  local dir=$1 label i s v bad=0 changed
  label=$(basename "$dir")
  local -a src var
  mapfile -t src < <(series_patches)
  mapfile -t var < <(PATCH_DIR=$dir series_patches)
  if [[ ${#src[@]} != "${#var[@]}" ]]; then
    echo "variant $label is stale: it has ${#var[@]} patches, patches/series has ${#src[@]}"
    bad=1
  fi
  for ((i = 0; i < ${#src[@]} && i < ${#var[@]}; i++)); do
    s=$(patch_subject "${src[$i]}")
    v=$(patch_subject "${var[$i]}")
    if [[ "$s" != "$v" ]]; then
      echo "variant $label is stale: patch $((i + 1)) is '$v' there, '$s' in patches/"
      bad=1
    fi
  done
  if [[ $bad == 0 ]]; then
    if [[ ! -f "$dir/SOURCE" ]]; then
      echo "variant $label has no SOURCE file (not written by scripts/rebase.sh)"
      bad=1
    elif ! changed=$(diff <(series_fingerprint) "$dir/SOURCE" | sed -n 's/^< [0-9a-f]*  //p') \
      || [[ -n "$changed" ]]; then
      echo "variant $label is stale: changed in patches/ since it was generated: ${changed//$'\n'/, }"
      bad=1
    fi
  fi
  if [[ $bad == 1 ]]; then
    echo "  regenerate it: scripts/rebase.sh --onto $label (see CONTRIBUTING.md, 'Maintained variants')"
  fi
  return $bad
}

# rebase_clone DIR TAG BRANCH: a scratch clone of vllm/ in DIR with BRANCH checked out
# at TAG, git rerere on (auto-staging what it resolves) and an empty rr-cache.
rebase_clone() {
  local dir=$1 tag=$2 branch=$3
  rm -rf "$dir"
  git clone -q --no-checkout "$VLLM_DIR" "$dir"
  git -C "$dir" config user.name "vllm-dsl rebase"
  git -C "$dir" config user.email "rebase@localhost"
  git -C "$dir" config rerere.enabled true
  git -C "$dir" config rerere.autoupdate true
  git -C "$dir" config gc.auto 0
  git -C "$dir" checkout -q -B "$branch" "$tag"
  rm -rf "$dir/.git/rr-cache"
}

# Shared by am_recorded and the recording in rebase.sh: `git am` of one patch, as
# apply.sh does it, quiet.
_am_one() {
  git -C "$1" am -q --3way --keep-non-patch --committer-date-is-author-date "${@:2}"
}

# _amend_keep_dates REPO: amend HEAD with the index, committer date = author date.
_amend_keep_dates() {
  GIT_COMMITTER_DATE=$(git -C "$1" log -1 --format=%aD) git -C "$1" commit -q --amend --no-edit --no-verify
}

# am_recorded REPO PATCH [FIXUP] [STOP]: apply one patch onto REPO's HEAD (a rebase_clone
# whose rr-cache holds the recorded resolutions), then FIXUP (a diff) when given.
# Sets AM_RESULT to clean | 3-way | recorded (every conflict resolved by rerere from
# the record) | conflict (a NEW CONFLICT, or a fixup that no longer applies); AM_FILES
# to the conflicting files; AM_FIXUP to the files the fixup changed. On a conflict the
# patch is dropped and REPO left clean, unless STOP=1: then the `git am` stays in
# progress (resolve, `git am --continue`). Returns 0.
am_recorded() {
  local repo=$1 patch=$2 fixup=${3:-} stop=${4:-0} out="" conflicted remaining
  AM_RESULT="" AM_FILES="" AM_FIXUP=""
  if git -C "$repo" apply --check "$patch" >/dev/null 2>&1 && _am_one "$repo" "$patch" >/dev/null 2>&1; then
    AM_RESULT=clean
  elif out=$(_am_one "$repo" "$patch" 2>&1); then
    AM_RESULT=3-way
  else
    # The paths rerere resolved from the record ("Staged 'X' using previous
    # resolution."), then those still unresolved.
    conflicted=$(sed -nE "s/^(Staged|Resolved) '(.*)' using previous resolution\.$/\2/p" <<<"$out" | sort -u)
    remaining=$(git -C "$repo" diff --name-only --diff-filter=U)
    AM_FILES=$(printf '%s\n%s\n' "$conflicted" "$remaining" | sed '/^$/d' | sort -u | paste -sd' ' -)
    # shellcheck disable=SC2086  # paths of vLLM's tree have no spaces
    if [[ -n "$conflicted" && -z "$remaining" ]] && ! (cd "$repo" && grep -lq '^<<<<<<< ' -- $conflicted) \
      && git -C "$repo" am --continue >/dev/null 2>&1; then
      AM_RESULT=recorded
    else
      AM_RESULT=conflict
      [[ -n "$AM_FILES" ]] || AM_FILES=$(sed -nE 's/^error: (patch failed: )?([^ :]+): .*/\2/p' <<<"$out" \
        | sort -u | paste -sd' ' -)
      if [[ $stop == 1 ]]; then return 0; fi
      git -C "$repo" am --abort >/dev/null 2>&1 || true
      git -C "$repo" reset -q --hard
      return 0
    fi
  fi
  if [[ -n "$fixup" ]]; then
    AM_FIXUP=$(git -C "$repo" apply --numstat "$fixup" 2>/dev/null | cut -f3 | paste -sd' ' -)
    if git -C "$repo" apply -q --index --3way "$fixup" >/dev/null 2>&1; then
      _amend_keep_dates "$repo"
    else
      AM_RESULT=conflict
      AM_FILES="${AM_FIXUP:-?} (recorded fixup does not apply)"
      git -C "$repo" reset -q --hard HEAD
      [[ $stop == 1 ]] || git -C "$repo" reset -q --hard HEAD^
    fi
  fi
  return 0
}

# record_resolutions REPO PATCHES_ARRAY_NAME RESOLVED_REF OUT_DIR: replay the patches on
# REPO's HEAD (a rebase_clone), taking every conflict's resolution from the matching
# commit of RESOLVED_REF (one commit per patch, same subjects, on top of HEAD) so that
# git rerere records it, and saving what differs after each patch besides the conflicts
# as OUT_DIR/fixups/<patch>. RESOLVED_REF may hold only the first K patches (what
# `rebase.sh --stop` leaves after resolving): their fixups are replaced and the new
# rr-cache entries added, the record of the later patches is kept. With all patches,
# OUT_DIR/rr-cache and OUT_DIR/fixups are replaced (stale entries pruned). Dies on a
# mismatch between the patches and RESOLVED_REF.
record_resolutions() {
  local repo=$1 ref=$3 out=$4 base i p name want got conflicted
  local -n _patches=$2
  local -a resolved
  base=$(git -C "$repo" rev-parse HEAD)
  git -C "$repo" merge-base --is-ancestor "$base" "$ref" \
    || die "the resolved series is not based on $(git -C "$repo" describe --tags --always "$base")"
  mapfile -t resolved < <(git -C "$repo" rev-list --reverse "$base..$ref")
  [[ ${#resolved[@]} -ge 1 && ${#resolved[@]} -le ${#_patches[@]} ]] \
    || die "the resolved series has ${#resolved[@]} commits, patches/series ${#_patches[@]} patches"
  local tmp
  tmp=$(mktemp -d)
  mkdir -p "$tmp/fixups"
  rm -rf "$repo/.git/rr-cache"
  for i in "${!resolved[@]}"; do
    p=${_patches[$i]} name=$(basename "$p")
    want=$(patch_subject "$p")
    got=$(git -C "$repo" log -1 --format=%s "${resolved[$i]}")
    [[ "$want" == "$got" ]] || die "commit $((i + 1)) of the resolved series is '$got', patch $name is '$want'"
    if ! _am_one "$repo" "$p" >/dev/null 2>&1; then
      conflicted=$(git -C "$repo" diff --name-only --diff-filter=U)
      [[ -n "$conflicted" ]] || die "$name fails to apply without a content conflict (see 'git am -3' in $repo)"
      local f
      while IFS= read -r f; do
        if git -C "$repo" cat-file -e "${resolved[$i]}:$f" 2>/dev/null; then
          git -C "$repo" show "${resolved[$i]}:$f" >"$repo/$f"
        else
          rm -f "$repo/$f"
        fi
      done <<<"$conflicted"
      git -C "$repo" rerere >/dev/null
      # shellcheck disable=SC2086  # paths of vLLM's tree have no spaces
      git -C "$repo" add -A -- $conflicted
      git -C "$repo" am --continue >/dev/null || die "cannot continue $name after its resolution"
      log "recorded the resolution of $name: ${conflicted//$'\n'/ }"
    fi
    if ! git -C "$repo" diff --quiet HEAD "${resolved[$i]}"; then
      git -C "$repo" diff --full-index --binary HEAD "${resolved[$i]}" >"$tmp/fixups/$name"
      git -C "$repo" read-tree -u --reset "${resolved[$i]}"
      _amend_keep_dates "$repo"
      log "recorded a fixup for $name: $(git -C "$repo" apply --numstat "$tmp/fixups/$name" 2>/dev/null | cut -f3 | paste -sd' ' -)"
    fi
  done
  mkdir -p "$out"
  if [[ ${#resolved[@]} == "${#_patches[@]}" ]]; then
    rm -rf "$out/rr-cache" "$out/fixups"
  else
    for i in "${!resolved[@]}"; do rm -f "$out/fixups/$(basename "${_patches[$i]}")"; done
    log "kept the record of patches $((${#resolved[@]} + 1))..${#_patches[@]} (the resolved series stops before them)"
  fi
  mkdir -p "$out/rr-cache"
  local entry
  for entry in "$repo/.git/rr-cache"/*/; do
    [[ -f "$entry/postimage" ]] || continue
    mkdir -p "$out/rr-cache/$(basename "$entry")"
    cp "$entry"/preimage* "$entry"/postimage* "$out/rr-cache/$(basename "$entry")/"
  done
  if compgen -G "$tmp/fixups/*" >/dev/null; then mkdir -p "$out/fixups" && cp "$tmp"/fixups/* "$out/fixups/"; fi
  rmdir "$out/fixups" 2>/dev/null || true
  rm -rf "$tmp"
}

# load_resolutions REPO DIR: put the recorded rr-cache of DIR into REPO (a rebase_clone).
load_resolutions() {
  local repo=$1 dir=$2
  rm -rf "$repo/.git/rr-cache"
  mkdir -p "$repo/.git/rr-cache"
  if [[ -d "$dir/rr-cache" ]]; then cp -r "$dir/rr-cache/." "$repo/.git/rr-cache/"; fi
}
