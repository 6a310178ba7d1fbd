# cmake/fuzz.cmake — libFuzzer harnesses (tests/fuzz/fuzz_*.c):
#   fuzz_pyfile  muh scan's per-file analysis (pyfile_analyze)
#   fuzz_spec    the spec reader (spec_parse, then space_build when small)
#   fuzz_expr    the constraint language (expr_compile/eval, expr_eval_list)
#   fuzz_replay  the CSV replay reader (replay_load_csv over a fixed space)
#   fuzz_deploy  the deployment-file reader and writer (deploy_parse, deploy_set)
#   fuzz_scan    muh scan across modules (scan_tree over a 4-module package)
# Only with clang and -DMUH_FUZZ=ON:
#   CC=clang cmake -S . -B build-fuzz -G Ninja -DMUH_FUZZ=ON && cmake --build build-fuzz
#
# In every build (any compiler, no libFuzzer) each library harness is also
# linked with tests/fuzz/regress_main.c and ctest replays its inputs under
# tests/fuzz/regress/<harness>/ (fuzz/<harness>): crashes the fuzzer found
# stay fixed.
option(MUH_FUZZ "Build the libFuzzer harnesses (clang only)" OFF)
set(MUH_FUZZ_LIB_HARNESSES spec expr replay deploy scan)
if(MUH_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(_ts ${CMAKE_SOURCE_DIR}/third_party/tree-sitter-python/src)
  # the per-file analysis is every pyfile*.c (split by subject) and its arena
  file(GLOB _pyfile CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/src/scan/pyfile*.c)
  add_executable(fuzz_pyfile ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_pyfile.c ${_pyfile} ${CMAKE_SOURCE_DIR}/src/scan/pyflow.c
    ${CMAKE_SOURCE_DIR}/src/scan/scan_arena.c ${_ts}/parser.c ${_ts}/scanner.c)
  set_source_files_properties(${_ts}/parser.c ${_ts}/scanner.c PROPERTIES COMPILE_OPTIONS "-w")
  target_compile_definitions(fuzz_pyfile PRIVATE _GNU_SOURCE)
  target_include_directories(fuzz_pyfile PRIVATE ${CMAKE_SOURCE_DIR}/src/ts_compat ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src/include ${CMAKE_SOURCE_DIR}/src ${MUH_SUBSYSTEM_DIRS} ${_ts})
  target_compile_options(fuzz_pyfile PRIVATE -fsanitize=fuzzer,address,undefined -g -O1)
  target_link_options(fuzz_pyfile PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_pyfile PRIVATE PkgConfig::TREESITTER m)

  # The parts of the library the harnesses reach, instrumented for coverage
  # (fuzzer-no-link) and sanitized.
  find_package(Threads REQUIRED)
  set(_fuzz_lib_src)
  # whole subsystems (base, space, scan) and the files the harnesses call
  # beyond them; src/ has a folder per subsystem
  file(GLOB _fuzz_lib_src ${CMAKE_SOURCE_DIR}/src/base/*.c ${CMAKE_SOURCE_DIR}/src/space/*.c
       ${CMAKE_SOURCE_DIR}/src/scan/*.c ${CMAKE_SOURCE_DIR}/src/engine/deploy*.c)
  list(APPEND _fuzz_lib_src ${CMAKE_SOURCE_DIR}/src/search/replay.c ${CMAKE_SOURCE_DIR}/src/eval/linebuf.c)
  add_library(muh_fuzzlib STATIC ${_fuzz_lib_src} ${_ts}/parser.c ${_ts}/scanner.c)
  target_include_directories(muh_fuzzlib PUBLIC ${CMAKE_SOURCE_DIR}/include ${CMAKE_SOURCE_DIR}/src/include ${CMAKE_SOURCE_DIR}/src ${MUH_SUBSYSTEM_DIRS}
    PRIVATE ${CMAKE_SOURCE_DIR}/src/ts_compat ${_ts})
  target_compile_definitions(muh_fuzzlib PUBLIC _GNU_SOURCE MUH_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
  target_compile_options(muh_fuzzlib PRIVATE -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -g -O1)
  target_link_libraries(muh_fuzzlib PUBLIC PkgConfig::FYAML PkgConfig::CJSON PkgConfig::SQLITE
    PkgConfig::TREESITTER Threads::Threads ${CMAKE_DL_LIBS} m)
  foreach(h ${MUH_FUZZ_LIB_HARNESSES})
    add_executable(fuzz_${h} ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_${h}.c)
    target_compile_options(fuzz_${h} PRIVATE -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -g -O1)
    target_link_options(fuzz_${h} PRIVATE -fsanitize=fuzzer,address,undefined)
    target_link_libraries(fuzz_${h} PRIVATE muh_fuzzlib)
  endforeach()
elseif(MUH_FUZZ)
  message(WARNING "MUH_FUZZ needs clang (CC=clang); fuzz targets skipped")
endif()

enable_testing()
foreach(h ${MUH_FUZZ_LIB_HARNESSES})
  file(GLOB _inputs CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/fuzz/regress/${h}/*)
  if(NOT _inputs)
    continue()
  endif()
  add_executable(fuzz_${h}_regress ${CMAKE_SOURCE_DIR}/tests/fuzz/regress_main.c
    ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_${h}.c)
  target_compile_definitions(fuzz_${h}_regress PRIVATE _GNU_SOURCE)
  target_link_libraries(fuzz_${h}_regress PRIVATE muh_static)
  add_test(NAME fuzz/${h} COMMAND fuzz_${h}_regress ${_inputs} WORKING_DIRECTORY ${CMAKE_SOURCE_DIR})
  set_tests_properties(fuzz/${h} PROPERTIES TIMEOUT 60) # a hang found by fuzzing fails here
endforeach()
