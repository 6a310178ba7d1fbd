# cmake/fuzz.cmake — libFuzzer harness of the per-file analysis of muh scan
# (tests/fuzz/fuzz_pyfile.c). Only with clang and -DMUH_FUZZ=ON:
#   CC=clang cmake -S . -B build-fuzz -G Ninja -DMUH_FUZZ=ON && cmake --build build-fuzz --target fuzz_pyfile
option(MUH_FUZZ "Build the libFuzzer harnesses (clang only)" OFF)
if(MUH_FUZZ AND CMAKE_C_COMPILER_ID MATCHES "Clang")
  set(_ts ${CMAKE_SOURCE_DIR}/third_party/tree-sitter-python/src)
  add_executable(fuzz_pyfile ${CMAKE_SOURCE_DIR}/tests/fuzz/fuzz_pyfile.c ${CMAKE_SOURCE_DIR}/src/pyfile.c
    ${_ts}/parser.c ${_ts}/scanner.c)
  set_source_files_properties(${_ts}/parser.c ${_ts}/scanner.c PROPERTIES COMPILE_OPTIONS "-w")
  target_include_directories(fuzz_pyfile PRIVATE ${CMAKE_SOURCE_DIR}/src/ts_compat ${CMAKE_SOURCE_DIR}/src ${_ts})
  target_compile_options(fuzz_pyfile PRIVATE -fsanitize=fuzzer,address,undefined -g -O1)
  target_link_options(fuzz_pyfile PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_pyfile PRIVATE PkgConfig::TREESITTER m)
elseif(MUH_FUZZ)
  message(WARNING "MUH_FUZZ needs clang (CC=clang); fuzz targets skipped")
endif()
