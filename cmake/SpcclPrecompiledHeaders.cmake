# Headers parsed once per target instead of once per file. ccache caches
# such files with CCACHE_SLOPPINESS=pch_defines,time_macros
# (scripts/compiler-cache.sh). -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON turns
# both off (CMake's own switch).

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
# style. Only in the sanitized build and the fuzzers' build: the Release
# build parses every file, so that
#  - the wheel test (tests/python/wheel_in_venv.sh), which builds the
#    library again in a folder of its own, gets its objects from ccache: a
#    precompiled header's path (and file) differs between the two builds,
#    and every object missed (186 of 195 compiles; the test took 118 s
#    instead of 60 s, all that the header saved the Release build);
#  - a file or header that leaves out an include it needs still fails to
#    compile somewhere.
# The library's 184 objects, -j2, no ccache, idle 2-core VM: GCC 12 Release
# 145 s parsed, 85 s precompiled; the sanitized build (-O1; ASan and UBSan
# instrument what the header saves nothing of) 162 s, 146 s; the fuzzers'
# build (clang 14, -O2, coverage, ASan, UBSan) 182 s, 104 s. 24 headers
# instead of these 12 were slower (14.2 s against 11.6 s for 24 files
# picked at random). Not for the CPU kernels, whose -O3 -fno-trapping-math
# differ from the target's flags: GCC refuses a precompiled header built
# with other options (-Winvalid-pch).
if(SPCCL_SANITIZE OR SPCCL_BUILD_FUZZERS)
  set(SPCCL_PRECOMPILE_LIBRARY_HEADERS ON)
else()
  set(SPCCL_PRECOMPILE_LIBRARY_HEADERS OFF)
endif()
function(spccl_precompile_library_headers target)
  if(NOT SPCCL_PRECOMPILE_LIBRARY_HEADERS)
    return()
  endif()
  set(headers)
  foreach(header algorithm atomic chrono cstdint cstring functional map memory mutex string
          utility vector)
    list(APPEND headers "$<$<COMPILE_LANGUAGE:CXX>:<${header}$<ANGLE-R>>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
