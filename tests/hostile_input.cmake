# Hostile and malformed input (issue 11) and the exit codes: one test binary; most cases also run the salasim command
# as a user would (tests/compare/run_cli.hpp) and check its exit code and message.
salasim_add_tests(salasim_input_tests LABEL cpu
  SOURCES input/config_input_test.cpp input/scenario_input_test.cpp input/files_input_test.cpp input/cli_input_test.cpp
          input/readers_input_test.cpp
  LIBS salasim_scenarios salasim_compare salasim_reports salasim_ruler hdf5::hdf5
  PROPS ${SALASIM_ONE_THREAD})
target_compile_definitions(salasim_input_tests PRIVATE SALASIM_BIN="$<TARGET_FILE:salasim>")
add_dependencies(salasim_input_tests salasim)

# Hostile cases by class (tests/hostile/CLASS.sh, written as tests/hostile/lib.sh says): one ctest per class, each
# case a real salasim process in a scratch folder; each class writes its section of docs/hostile-cases.md.
file(GLOB SALASIM_HOSTILE_FILES CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/hostile/*.sh)
foreach(f ${SALASIM_HOSTILE_FILES})
  get_filename_component(class ${f} NAME_WE)
  if(class STREQUAL "lib" OR class STREQUAL "run" OR class STREQUAL "doc")
    continue()
  endif()
  salasim_checked_test("hostile: ${class}" EXIT 0 MATCH "hostile ${class}: [0-9]+ cases, 0 failed"
    PROPS FIXTURES_SETUP hostile_${class}
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hostile/run.sh ${class} ${SALASIM_BIN} ${CMAKE_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/tmp/hostile)
endforeach()
