# Writes OUT = a header defining SALASIM_BUILD_REVISION, the `git describe` of SRC at build time, rewritten only
# when it changes (so only cli/common.cpp recompiles). Empty where SRC is not a git checkout.
execute_process(COMMAND git -C "${SRC}" describe --always --dirty
  OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  set(rev "")
endif()
set(text "#define SALASIM_BUILD_REVISION \"${rev}\"\n")
set(old "")
if(EXISTS "${OUT}")
  file(READ "${OUT}" old)
endif()
if(NOT old STREQUAL text)
  file(WRITE "${OUT}" "${text}")
endif()
