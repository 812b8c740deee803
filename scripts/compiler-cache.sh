# Sourced by run-demo.sh and run-tests.sh, so that both configure build/
# alike (a different launcher would make each rebuild what the other
# built): compiles through ccache where installed (install-deps.sh
# installs it). Appends the launchers to the caller's `flags` array.
#
# Reruns then recompile only what changed, and in a fresh checkout the
# wheel test (tests/python/wheel_in_venv.sh), which builds libspccl again
# with CMake and the same compilers and flags, finds the Release build's
# objects. Depend mode: a miss costs no extra preprocessor run (the key
# comes from the compiler's -MD output), so a cold cache, as in CI, costs
# next to nothing. The precompiled headers
# (cmake/SpcclPrecompiledHeaders.cmake) need the sloppiness below, as ccache's
# manual says ("Precompiled headers"); without it every file that uses one
# compiles uncached (8 of 8 for spccl_fault_tests; 8 hits with it).
if command -v ccache >/dev/null; then
  for lang in C CXX CUDA; do flags+=("-DCMAKE_${lang}_COMPILER_LAUNCHER=ccache"); done
  export CCACHE_DEPEND=1
  export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:+$CCACHE_SLOPPINESS,}pch_defines,time_macros
fi
