# Optional dependencies. Absent means off, never a failed configure.
include(CheckLanguage)
find_package(PkgConfig QUIET)

set(SPCCL_FEATURES "")
macro(spccl_feature name found detail)
  if(${found})
    set(SPCCL_HAVE_${name} ON)
    list(APPEND SPCCL_FEATURES "${name}")
    message(STATUS "spccl feature ${name}: ON (${detail})")
  else()
    set(SPCCL_HAVE_${name} OFF)
  endif()
  set(SPCCL_FEATURE_DETAIL_${name} "${detail}")
endmacro()

find_package(CUDAToolkit QUIET)
spccl_feature(CUDA CUDAToolkit_FOUND "${CUDAToolkit_VERSION}")

find_library(SPCCL_NCCL_LIBRARY nccl HINTS /usr/local/cuda/lib64 ${CUDAToolkit_LIBRARY_DIR})
find_path(SPCCL_NCCL_INCLUDE nccl.h HINTS /usr/local/cuda/include ${CUDAToolkit_INCLUDE_DIRS})
if(SPCCL_NCCL_LIBRARY AND SPCCL_NCCL_INCLUDE)
  set(_nccl_found TRUE)
else()
  set(_nccl_found FALSE)
endif()
spccl_feature(NCCL _nccl_found "${SPCCL_NCCL_LIBRARY}")

find_package(MPI QUIET COMPONENTS C)
spccl_feature(MPI MPI_C_FOUND "${MPI_C_LIBRARY_VERSION_STRING}")

set(_ucx_found FALSE)
set(_hwloc_found FALSE)
if(PkgConfig_FOUND)
  pkg_check_modules(UCX QUIET ucx)
  if(UCX_FOUND)
    set(_ucx_found TRUE)
  endif()
  pkg_check_modules(HWLOC QUIET hwloc)
  if(HWLOC_FOUND)
    set(_hwloc_found TRUE)
  endif()
endif()
spccl_feature(UCX _ucx_found "${UCX_VERSION}")
spccl_feature(HWLOC _hwloc_found "${HWLOC_VERSION}")

find_library(SPCCL_IBVERBS_LIBRARY ibverbs)
find_path(SPCCL_IBVERBS_INCLUDE infiniband/verbs.h)
if(SPCCL_IBVERBS_LIBRARY AND SPCCL_IBVERBS_INCLUDE)
  set(_ibv_found TRUE)
else()
  set(_ibv_found FALSE)
endif()
spccl_feature(IBVERBS _ibv_found "${SPCCL_IBVERBS_LIBRARY}")

# OpenBLAS (Debian's libopenblas-dev): the GEMMs of perf/migrate_perf.
find_library(SPCCL_OPENBLAS_LIBRARY openblas)
find_path(SPCCL_OPENBLAS_INCLUDE cblas.h PATH_SUFFIXES openblas)
if(SPCCL_OPENBLAS_LIBRARY AND SPCCL_OPENBLAS_INCLUDE)
  set(_openblas_found TRUE)
else()
  set(_openblas_found FALSE)
endif()
spccl_feature(OPENBLAS _openblas_found "${SPCCL_OPENBLAS_LIBRARY}")

find_package(GTest QUIET)
# No installed GoogleTest (the bare image of the lent GPU machines): build it
# from sources, the copy scripts/prepare-device-kit.sh puts in .devkit/, or
# any googletest checkout named by SPCCL_GTEST_SOURCE_DIR.
set(SPCCL_GTEST_SOURCE_DIR "" CACHE PATH
  "GoogleTest sources (with googletest/ and googlemock/), built when find_package(GTest) fails")
set(_gtest_detail "GoogleTest")
if(NOT GTest_FOUND)
  set(_gtest_src "${SPCCL_GTEST_SOURCE_DIR}")
  if(NOT _gtest_src AND EXISTS "${CMAKE_CURRENT_LIST_DIR}/../.devkit/googletest/CMakeLists.txt")
    set(_gtest_src "${CMAKE_CURRENT_LIST_DIR}/../.devkit/googletest")
  endif()
  if(_gtest_src)
    get_filename_component(_gtest_src "${_gtest_src}" ABSOLUTE BASE_DIR "${CMAKE_SOURCE_DIR}")
  endif()
  if(_gtest_src AND EXISTS "${_gtest_src}/googletest/CMakeLists.txt")
    set(BUILD_GMOCK ON CACHE BOOL "" FORCE)
    set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
    add_subdirectory("${_gtest_src}" "${CMAKE_BINARY_DIR}/_deps/googletest" EXCLUDE_FROM_ALL)
    # The names an installed GoogleTest's config provides, used in tests/*.
    foreach(_lib gtest gtest_main gmock gmock_main)
      if(TARGET ${_lib} AND NOT TARGET GTest::${_lib})
        add_library(GTest::${_lib} ALIAS ${_lib})
      endif()
    endforeach()
    # Every later find_package(GTest [REQUIRED]) in tests/ resolves to this
    # build: FindGTest tries config mode first, and GTest_DIR names a config
    # that reports the targets above. A -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON
    # (how the bare image is simulated) is lifted for those calls.
    file(WRITE "${CMAKE_BINARY_DIR}/_deps/gtest-config/GTestConfig.cmake"
      "# Written by cmake/SpcclFeatures.cmake: GoogleTest built from ${_gtest_src}\n"
      "set(GTest_FOUND TRUE)\n")
    set(GTest_DIR "${CMAKE_BINARY_DIR}/_deps/gtest-config" CACHE PATH
      "GoogleTest config (spccl's from-source build)" FORCE)
    set(CMAKE_DISABLE_FIND_PACKAGE_GTest OFF)
    set(GTest_FOUND TRUE)
    set(_gtest_detail "GoogleTest built from ${_gtest_src}")
  endif()
endif()
spccl_feature(GTEST GTest_FOUND "${_gtest_detail}")
find_package(benchmark QUIET)
spccl_feature(BENCHMARK benchmark_FOUND "Google Benchmark")

# Python bindings (bindings/python): Debian's pybind11-dev, built for the
# interpreter the Python tests run, Debian's /usr/bin/python3 (python3-torch
# lives there) unless -DPython3_EXECUTABLE names another.
if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 QUIET COMPONENTS Interpreter Development.Module)
set(_pybind11_found FALSE)
if(Python3_FOUND)
  find_package(pybind11 CONFIG QUIET)
  set(_pybind11_found ${pybind11_FOUND})
endif()
spccl_feature(PYBIND11 _pybind11_found "pybind11 ${pybind11_VERSION}, ${Python3_EXECUTABLE}")

string(REPLACE ";" "," SPCCL_FEATURE_STRING "${SPCCL_FEATURES}")

function(spccl_print_feature_summary)
  message(STATUS "")
  message(STATUS "spccl ${PROJECT_VERSION} configuration summary")
  foreach(f CUDA NCCL MPI UCX IBVERBS HWLOC OPENBLAS GTEST BENCHMARK PYBIND11)
    if(SPCCL_HAVE_${f})
      message(STATUS "  ${f}: ON  ${SPCCL_FEATURE_DETAIL_${f}}")
    else()
      message(STATUS "  ${f}: OFF")
    endif()
  endforeach()
  message(STATUS "  sanitizers: ${SPCCL_SANITIZE}")
  message(STATUS "")
endfunction()
