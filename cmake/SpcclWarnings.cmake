# -Wall -Wextra -Werror on the project's own code only.
function(spccl_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
