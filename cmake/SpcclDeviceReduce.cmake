# The device-resident all-reduce's kernels (kernels/device_reduce) inside
# libspccl WITHOUT a CUDA link: with SPCCL_BUILD_CUDA, nvcc compiles the one
# .cu file to a fatbin, which is embedded as bytes
# (kernels/device_reduce/reduce_inputs_image.h) and loaded at run time
# through the dlopen'ed driver (src/device/cuda_module.h). Without CUDA the
# image is empty and the path is absent (the staged path runs).
set(_image_cc ${CMAKE_CURRENT_BINARY_DIR}/reduce_inputs_image.cc)
if(SPCCL_BUILD_CUDA)
  # SPCCL_CUDA_ARCHS in CMAKE_CUDA_ARCHITECTURES syntax: NN-real is SASS,
  # NN-virtual is PTX, a plain NN is both.
  set(_gencode)
  foreach(arch ${SPCCL_CUDA_ARCHS})
    string(REGEX MATCH "^[0-9]+" _sm "${arch}")
    if(NOT arch MATCHES "-virtual$")
      list(APPEND _gencode -gencode arch=compute_${_sm},code=sm_${_sm})
    endif()
    if(NOT arch MATCHES "-real$")
      list(APPEND _gencode -gencode arch=compute_${_sm},code=compute_${_sm})
    endif()
  endforeach()
  set(_src ${CMAKE_CURRENT_SOURCE_DIR}/kernels/device_reduce/reduce_inputs.cu)
  set(_fatbin ${CMAKE_CURRENT_BINARY_DIR}/reduce_inputs.fatbin)
  # The same IEEE options as the other CUDA kernels (SpcclCuda.cmake).
  add_custom_command(OUTPUT ${_fatbin}
    COMMAND ${CMAKE_CUDA_COMPILER} -std=c++20 --fatbin ${_gencode} -fmad=false -ftz=false
      -prec-div=true --Werror=all-warnings --expt-relaxed-constexpr
      -I${CMAKE_CURRENT_SOURCE_DIR}/include -I${CMAKE_CURRENT_SOURCE_DIR}/src
      -I${CMAKE_CURRENT_SOURCE_DIR} ${_src} -o ${_fatbin}
    DEPENDS ${_src} ${CMAKE_CURRENT_SOURCE_DIR}/kernels/device_reduce/reduce_inputs.h
      ${CMAKE_CURRENT_SOURCE_DIR}/kernels/cpu/reduce_ops.h
      ${CMAKE_CURRENT_SOURCE_DIR}/kernels/cpu/element_format.h
      ${CMAKE_CURRENT_SOURCE_DIR}/kernels/cpu/half_float.h
    COMMENT "nvcc: the device all-reduce's kernels to a fatbin" VERBATIM)
  add_custom_command(OUTPUT ${_image_cc}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${_fatbin} -DOUTPUT=${_image_cc}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_bytes.cmake
    DEPENDS ${_fatbin} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_bytes.cmake VERBATIM)
  message(STATUS "spccl device all-reduce kernels: embedded fatbin (${SPCCL_CUDA_ARCHS})")
else()
  file(WRITE ${_image_cc}.in
    "// No CUDA at build time: no kernels, the device all-reduce is absent.\n"
    "#include \"kernels/device_reduce/reduce_inputs_image.h\"\n"
    "namespace spccl::kernels::device_reduce {\n"
    "const unsigned char* reduceInputsImage() { return nullptr; }\n"
    "size_t reduceInputsImageBytes() { return 0; }\n}\n")
  configure_file(${_image_cc}.in ${_image_cc} COPYONLY)
endif()
target_sources(spccl_objects PRIVATE ${_image_cc})
# For other builds of the library's sources (tests/fuzz).
set(SPCCL_DEVICE_REDUCE_IMAGE ${_image_cc})
