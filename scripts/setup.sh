#!/usr/bin/env bash
# Installs lm-eval's build dependencies from Debian packages and builds build/lm-eval.
# Non-interactive and idempotent; run as root (or with sudo available) on Debian 12.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD_DIR="${LMEVAL_BUILD_DIR:-$ROOT/build}"
BUILD_TYPE="${LMEVAL_BUILD_TYPE:-Release}"

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git clang-format  # clang-format: scripts/check_format.sh
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libfmt-dev libspdlog-dev
  libgtest-dev libgmock-dev libpcre2-dev libsentencepiece-dev libicu-dev
  libzstd-dev libsnappy-dev zlib1g-dev libcurl4-openssl-dev libssl-dev libcpp-httplib-dev
  libtorch-dev libopenblas0-pthread libsqlite3-dev
  python3 python3-venv
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

if [ "${LMEVAL_SKIP_BUILD:-0}" = "1" ]; then exit 0; fi

JOBS="${LMEVAL_JOBS:-$(nproc)}"
cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="$BUILD_TYPE" \
  -DCMAKE_CXX_COMPILER_LAUNCHER=ccache ${LMEVAL_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${LMEVAL_TARGET:-all}"
