# spccl_precompile_test_headers(<target>): GoogleTest and the standard
# headers most test files include, precompiled once for a test binary of
# many files instead of parsed again in each (about 1.8 s of every test
# file's compile, GCC 12 -O3). spccl_unit_tests' 50 files: 128 s -> 93 s
# with -j2 on this project's 2-core VM, idle, no ccache; ten more standard
# headers saved nothing more. Only for binaries of several C++ files: for
# one file the header costs as much precompiled as parsed. ccache caches
# these files with CCACHE_SLOPPINESS=pch_defines,time_macros
# (scripts/compiler-cache.sh). -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns
# it off (CMake's own switch).
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
