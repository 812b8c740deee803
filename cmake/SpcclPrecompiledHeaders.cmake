# Headers parsed once per target instead of once per file. ccache caches
# such files with CCACHE_SLOPPINESS=pch_defines,time_macros
# (scripts/compiler-cache.sh). -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns
# both off (CMake's own switch). The fuzz harnesses' copy of the library
# (tests/fuzz, CI's last step) has none, so that a library file or header
# that leaves out an include it needs still fails to compile somewhere.

# spccl_precompile_test_headers(<target>): GoogleTest and the standard
# headers most test files include, precompiled once for a test binary of
# many files instead of parsed again in each (about 1.8 s of every test
# file's compile, GCC 12 -O3). spccl_unit_tests' 50 files: 128 s -> 93 s
# with -j2 on this project's 2-core VM, idle, no ccache; ten more standard
# headers saved nothing more. Only for binaries of several C++ files: for
# one file the header costs as much precompiled as parsed.
function(spccl_precompile_test_headers target)
  target_precompile_headers(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:<gtest/gtest.h$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<algorithm$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<cstdint$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<cstring$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<random$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<string$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<thread$<ANGLE-R>>"
    "$<$<COMPILE_LANGUAGE:CXX>:<vector$<ANGLE-R>>")
endfunction()

# spccl_precompile_library_headers(<target>): the standard headers that
# most of the library's files include, themselves or through spccl's own
# headers; also for the perf harness and the NCCL interposer, of the same
# style. The library's 184 objects, -j2, no ccache, idle 2-core VM: GCC 12
# Release 145 s parsed, 85 s precompiled; the sanitized build (-O1, ASan
# and UBSan instrumenting what the header saves nothing of) 162 s, 146 s.
# The root CMakeLists.txt says why the Release library does without. 24
# headers instead of these 12 were slower (14.2 s against 11.6 s for 24
# files picked at random). Not for the CPU kernels, whose -O3
# -fno-trapping-math differ from the target's flags: GCC refuses a
# precompiled header built with other options (-Winvalid-pch).
function(spccl_precompile_library_headers target)
  set(headers)
  foreach(header algorithm atomic chrono cstdint cstring functional map memory mutex string
          utility vector)
    list(APPEND headers "$<$<COMPILE_LANGUAGE:CXX>:<${header}$<ANGLE-R>>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
