# spccl's own CUDA kernels inside libspccl WITHOUT a CUDA link: with
# SPCCL_BUILD_CUDA, nvcc compiles each .cu file to a fatbin, which is
# embedded as bytes behind a header of two functions (<symbol>() and
# <symbol>Bytes()) and loaded at run time through the dlopen'ed driver
# (src/device/cuda_module.h). Without CUDA each image is empty and the
# path that needs it is absent (the staged path runs).
#
# SPCCL_DEVICE_IMAGES lists the generated .cc files, for other builds of
# the library's sources (tests/fuzz).
set(SPCCL_DEVICE_IMAGES)

if(SPCCL_BUILD_CUDA)
  # SPCCL_CUDA_ARCHS in CMAKE_CUDA_ARCHITECTURES syntax: NN-real is SASS,
  # NN-virtual is PTX, a plain NN is both.
  set(_spccl_gencode)
  foreach(arch ${SPCCL_CUDA_ARCHS})
    string(REGEX MATCH "^[0-9]+" _sm "${arch}")
    if(NOT arch MATCHES "-virtual$")
      list(APPEND _spccl_gencode -gencode arch=compute_${_sm},code=sm_${_sm})
    endif()
    if(NOT arch MATCHES "-real$")
      list(APPEND _spccl_gencode -gencode arch=compute_${_sm},code=compute_${_sm})
    endif()
  endforeach()
  message(STATUS "spccl device kernels: embedded fatbins (${SPCCL_CUDA_ARCHS})")
endif()

# spccl_embed_device_image(<source.cu> <header.h> <namespace> <symbol> DEPENDS <headers>...):
# paths relative to the source tree; `header` declares the two functions.
function(spccl_embed_device_image source header namespace symbol)
  cmake_parse_arguments(ARG "" "" "DEPENDS" ${ARGN})
  get_filename_component(_name ${source} NAME_WE)
  set(_image_cc ${CMAKE_CURRENT_BINARY_DIR}/${_name}_image.cc)
  set(_embed_args -DHEADER=${header} -DNAMESPACE=${namespace} -DSYMBOL=${symbol})
  if(SPCCL_BUILD_CUDA)
    set(_fatbin ${CMAKE_CURRENT_BINARY_DIR}/${_name}.fatbin)
    set(_deps)
    foreach(dep ${ARG_DEPENDS})
      list(APPEND _deps ${CMAKE_CURRENT_SOURCE_DIR}/${dep})
    endforeach()
    # The same IEEE options as the other CUDA kernels (SpcclCuda.cmake).
    add_custom_command(OUTPUT ${_fatbin}
      COMMAND ${CMAKE_CUDA_COMPILER} -std=c++20 --fatbin ${_spccl_gencode} -fmad=false -ftz=false
        -prec-div=true --Werror=all-warnings --expt-relaxed-constexpr
        -I${CMAKE_CURRENT_SOURCE_DIR}/include -I${CMAKE_CURRENT_SOURCE_DIR}/src
        -I${CMAKE_CURRENT_SOURCE_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/${source} -o ${_fatbin}
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${source} ${_deps}
      COMMENT "nvcc: ${source} to a fatbin" VERBATIM)
    add_custom_command(OUTPUT ${_image_cc}
      COMMAND ${CMAKE_COMMAND} -DINPUT=${_fatbin} -DOUTPUT=${_image_cc} ${_embed_args}
        -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_bytes.cmake
      DEPENDS ${_fatbin} ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_bytes.cmake VERBATIM)
  else()
    # No INPUT: embed_bytes writes the empty image (nullptr, 0 bytes).
    execute_process(COMMAND ${CMAKE_COMMAND} -DOUTPUT=${_image_cc}.in ${_embed_args}
      -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/embed_bytes.cmake)
    configure_file(${_image_cc}.in ${_image_cc} COPYONLY)
  endif()
  target_sources(spccl_objects PRIVATE ${_image_cc})
  set(SPCCL_DEVICE_IMAGES ${SPCCL_DEVICE_IMAGES} ${_image_cc} PARENT_SCOPE)
endfunction()

# The device-resident all-reduce's reduction (docs/gpu.md).
spccl_embed_device_image(kernels/device_reduce/reduce_inputs.cu
  kernels/device_reduce/reduce_inputs_image.h spccl::kernels::device_reduce reduceInputsImage
  DEPENDS kernels/device_reduce/reduce_inputs.h kernels/cpu/reduce_ops.h
    kernels/cpu/element_format.h kernels/cpu/half_float.h)
# The sparse all-reduce's non-zero extraction and scatter (docs/gpu.md).
spccl_embed_device_image(kernels/device_sparse/extract_nonzeros.cu
  kernels/device_sparse/extract_nonzeros_image.h spccl::kernels::device_sparse
  extractNonZerosImage
  DEPENDS kernels/device_sparse/extract_nonzeros.h kernels/cpu/sparse/format_dispatch.h
    kernels/cpu/element_format.h kernels/cpu/half_float.h)
# Balanced Parallelism's push buckets from the extracted pairs (docs/gpu.md).
spccl_embed_device_image(kernels/device_sparse/bucket_pairs.cu
  kernels/device_sparse/bucket_pairs_image.h spccl::kernels::device_sparse bucketPairsImage
  DEPENDS kernels/device_sparse/bucket_pairs.h kernels/device_sparse/partition_math.h
    kernels/device_sparse/extract_nonzeros.h kernels/zen_hash.h kernels/cpu/sparse/format_dispatch.h
    kernels/cpu/element_format.h kernels/cpu/half_float.h)
# The token all-reduces' row gather, scatter and zeroing (docs/gpu.md).
spccl_embed_device_image(kernels/device_rows/move_rows.cu
  kernels/device_rows/move_rows_image.h spccl::kernels::device_rows moveRowsImage
  DEPENDS kernels/device_rows/move_rows.h kernels/host_device.h)
# The compressed all-reduce's input encode, output decode and the ring's running sum
# (docs/gpu.md).
spccl_embed_device_image(kernels/device_codecs/codecs.cu
  kernels/device_codecs/codecs_image.h spccl::kernels::device_codecs codecsImage
  DEPENDS kernels/device_codecs/decode_codes.h kernels/device_codecs/encode_codes.h
    kernels/device_codecs/accumulate_codes.h
    kernels/device_codecs/element_formats.h
    kernels/cuda/quantize_groups.h
    kernels/cpu/compress/quantize_element.h kernels/cpu/compress/quantizer_levels.h
    kernels/cpu/element_format.h kernels/host_device.h)
