# spccl_sanitizer_preload(PRELOAD_VAR SKIP_REASON_VAR): for a test that loads
# an instrumented spccl library into an uninstrumented program (an
# interposer under mpirun, libnccl.so.2's stand-in), the sanitizer runtimes
# that must come first in LD_PRELOAD (colon-separated), or why such a test
# cannot run in this build. Both empty without SPCCL_SANITIZE.
function(spccl_sanitizer_preload preload_var skip_var)
  set(skip "")
  set(preload "")
  if(SPCCL_SANITIZE)
    foreach(runtime asan ubsan)
      if((runtime STREQUAL "asan" AND SPCCL_SANITIZE MATCHES "address") OR
         (runtime STREQUAL "ubsan" AND SPCCL_SANITIZE MATCHES "undefined"))
        execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=lib${runtime}.so
                        OUTPUT_VARIABLE lib OUTPUT_STRIP_TRAILING_WHITESPACE)
        if(IS_ABSOLUTE "${lib}" AND EXISTS "${lib}")
          list(APPEND preload "${lib}")
        else()
          set(skip "SPCCL_SANITIZE=${SPCCL_SANITIZE} but ${CMAKE_CXX_COMPILER} has no shared lib${runtime}.so to preload before the library")
        endif()
      endif()
    endforeach()
    if(SPCCL_SANITIZE MATCHES "thread|memory")
      set(skip "SPCCL_SANITIZE=${SPCCL_SANITIZE}: only address and undefined runtimes can be preloaded into an uninstrumented program")
    endif()
    string(REPLACE ";" ":" preload "${preload}")
  endif()
  set(${preload_var} "${preload}" PARENT_SCOPE)
  set(${skip_var} "${skip}" PARENT_SCOPE)
endfunction()
