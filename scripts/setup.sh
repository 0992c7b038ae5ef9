#!/usr/bin/env bash
# Installs lm-eval's build dependencies from Debian packages and builds build/lm-eval with its
# CPU hf backend (build/liblmeval_hf_cpu.so, Debian's libtorch).
# Non-interactive and idempotent; run as root (or with sudo available) on Debian 12.
#
# --cuda: then also the CUDA hf backend, build/liblmeval_hf_cuda.so, which `--device cuda` loads:
# a venv (LMEVAL_CUDA_VENV, default .venv-cuda) with PyPI's torch wheel (LMEVAL_TORCH_SPEC,
# default `torch`: on Linux x86-64 the CUDA build, 5.3 GB installed with its nvidia-* libraries for torch 2.15), and
# the plugin compiled against that wheel's libtorch in build-cuda/. No CUDA toolkit is needed;
# running it needs an NVIDIA driver.
#
# --test-venv: also the Python environment of the tests that run tasks' own Python helpers
# (.venv-standin: scripts/python-test-requirements.txt from PyPI, about 2 minutes). Without it,
# or when PyPI cannot be reached, those tests skip with a message. CI (.ci/run) asks for it.
set -euo pipefail

CUDA=0
TEST_VENV=0
for arg in "$@"; do
  case "$arg" in
    --cuda) CUDA=1 ;;
    --test-venv) TEST_VENV=1 ;;
    *) echo "setup.sh: unknown argument $arg (expected --cuda or --test-venv)" >&2; exit 2 ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${LMEVAL_BUILD_DIR:-$ROOT/build}"
BUILD_TYPE="${LMEVAL_BUILD_TYPE:-Release}"

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git clang-format clang-tidy  # scripts/check_format.sh, check_tidy.sh
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev libspdlog-dev
  libgtest-dev libgmock-dev libpcre2-dev libsentencepiece-dev libicu-dev
  libzstd-dev libsnappy-dev zlib1g-dev libcurl4-openssl-dev libssl-dev libcpp-httplib-dev
  libtorch-dev libopenblas0-pthread libsqlite3-dev
  python3 python3-venv
  python3-dev pybind11-dev  # liblmeval_python.so: the embedded interpreter for Python task helpers
  chromium fonts-liberation  # test_analysis renders `lm-eval report` headless (about 2 min to install; the test skips without it)
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ "$TEST_VENV" = "1" ] && [ ! -x "$ROOT/.venv-standin/bin/python" ]; then
  # Not fatal: the tests that need it skip without it.
  if ! { python3 -m venv "$ROOT/.venv-standin" &&
    "$ROOT/.venv-standin/bin/pip" install -q --disable-pip-version-check \
      -r "$ROOT/scripts/python-test-requirements.txt"; }; then
    echo "setup: could not make .venv-standin (PyPI unreachable?); the Python task tests will skip" >&2
    rm -rf "$ROOT/.venv-standin"
  fi
fi

if [ "${LMEVAL_SKIP_BUILD:-0}" = "1" ]; then exit 0; fi

JOBS="${LMEVAL_JOBS:-$(nproc)}"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache ${LMEVAL_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${LMEVAL_TARGET:-all}"

if [ "$CUDA" = "1" ]; then
  VENV="${LMEVAL_CUDA_VENV:-$ROOT/.venv-cuda}"
  CUDA_BUILD_DIR="${LMEVAL_CUDA_BUILD_DIR:-$ROOT/build-cuda}"
  [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "${LMEVAL_TORCH_SPEC:-torch}"
  TORCH_PKG="$("$VENV/bin/python" -c 'import os, torch; print(os.path.dirname(torch.__file__))')"
  ABI="$("$VENV/bin/python" -c 'import torch; print(int(torch._C._GLIBCXX_USE_CXX11_ABI))')"
  if ! "$VENV/bin/python" -c 'import sys, torch; sys.exit(0 if torch.version.cuda else 1)'; then
    echo "setup.sh --cuda: the torch in $VENV has no CUDA (a CPU wheel); install the CUDA one (LMEVAL_TORCH_SPEC)" >&2
    [ "${LMEVAL_ALLOW_CPU_WHEEL:-0}" = "1" ] || exit 1
  fi
  # Only the plugin is built there (tests off); it uses lm-eval's code from build/lm-eval.
  cmake -S "$ROOT" -B "$CUDA_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
    -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DLMEVAL_WITH_CUDA=ON -DLMEVAL_BUILD_TESTS=OFF \
    -DLMEVAL_TORCH_WHEEL="$TORCH_PKG" -DLMEVAL_TORCH_CXX11_ABI="$ABI" ${LMEVAL_CMAKE_ARGS:-} >/dev/null
  cmake --build "$CUDA_BUILD_DIR" -j "$JOBS" --target lmeval_hf_cuda
  cp "$CUDA_BUILD_DIR/liblmeval_hf_cuda.so" "$BUILD_DIR/"
  echo "setup.sh: $BUILD_DIR/liblmeval_hf_cuda.so built against $TORCH_PKG (--device cuda loads it)"
fi
