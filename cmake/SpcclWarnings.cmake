# -Wall -Wextra -Werror on the project's own code only.
# GCC 12 reports false -Wrestrict positives inside libstdc++'s std::string at
# -O3 (GCC bug 105329); they stay warnings rather than errors.
function(spccl_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE -Wno-error=restrict)
  endif()
endfunction()
