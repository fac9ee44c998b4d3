# Hostile and malformed input (issue 11) and the exit codes: one test binary; most cases also run the salasim command
# as a user would (tests/compare/run_cli.hpp) and check its exit code and message.
salasim_add_tests(salasim_input_tests LABEL cpu
  SOURCES input/config_input_test.cpp input/scenario_input_test.cpp input/files_input_test.cpp input/cli_input_test.cpp
          input/readers_input_test.cpp
  LIBS salasim_scenarios salasim_compare salasim_reports salasim_ruler hdf5::hdf5
  PROPS ${SALASIM_ONE_THREAD})
target_compile_definitions(salasim_input_tests PRIVATE SALASIM_BIN="$<TARGET_FILE:salasim>")
add_dependencies(salasim_input_tests salasim)
