#!/usr/bin/env bash
# Install llama-cpp-python built for every machine of this architecture, not only this one.
#
# pip compiles llama.cpp from source. Its default (-march=native) turns on whatever the build
# machine has, AMX and AVX-512 included, and llama.cpp's AMX path crashes on some Xeons. So on
# x86-64 we build for AVX2/FMA/F16C (every x86-64 CPU since 2013) with AVX-512 and AMX off; on
# ARM64 (Linux, macOS) llama.cpp's defaults are already portable and are kept. CMAKE_ARGS set by
# the caller wins. The wheel is kept in a cache keyed by those flags: pip's own wheel cache
# ignores CMAKE_ARGS and could hand back a native build.
#
# usage: scripts/install-llama.sh PYTHON
set -euo pipefail
PY=${1:?usage: install-llama.sh PYTHON}
SPEC="llama-cpp-python>=0.3.16,<0.4"

case "$(uname -m)" in
  x86_64 | amd64 | AMD64)
    PORTABLE="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
    PORTABLE+=" -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF"
    PORTABLE+=" -DGGML_AVX512_BF16=OFF -DGGML_AVX_VNNI=OFF"
    PORTABLE+=" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
    ;;
  *) PORTABLE="" ;;
esac
FLAGS=${CMAKE_ARGS:-$PORTABLE}
PYTAG=$("$PY" -c 'import sys, platform; print(f"cp{sys.version_info[0]}{sys.version_info[1]}-{platform.machine()}")')
KEY=$(printf '%s|%s|%s' "$SPEC" "$FLAGS" "$PYTAG" | sha256sum | cut -c1-16)
WHEELS="${OMEGA_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/omega/llama-wheels}/$KEY"
mkdir -p "$WHEELS"

if ! ls "$WHEELS"/llama_cpp_python-*.whl >/dev/null 2>&1; then
  echo ">> building llama-cpp-python (first time only: several minutes; progress below)"
  echo "   CMAKE_ARGS=${FLAGS:-<llama.cpp defaults>}"
  CMAKE_ARGS="$FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc 2>/dev/null || echo 2)" \
    "$PY" -m pip wheel -v --no-deps --no-cache-dir --no-binary llama-cpp-python \
    -w "$WHEELS.tmp" "$SPEC" 2>&1 | tee "$(dirname "$PY")/../llama-build.log" \
    | awk '/\[[0-9]+\/[0-9]+\]/ { match($0, /\[[0-9]+\/[0-9]+\]/); printf "   compiling llama.cpp %s\r", substr($0, RSTART, RLENGTH); fflush() }
           /Successfully built|ERROR/ { print "\n   " $0; fflush() }'
  mv "$WHEELS.tmp"/llama_cpp_python-*.whl "$WHEELS"/
  rm -rf "$WHEELS.tmp"
fi
# --prefer-binary: PyPI has only the sdist, so this picks our wheel; the dependencies come from PyPI.
"$PY" -m pip install --quiet --prefer-binary --find-links "$WHEELS" "$SPEC"
