# cmake/treesitter.cmake — the tree-sitter runtime (Debian's libtree-sitter,
# ABI 13-14) and the pinned Python grammar that scripts/deps.sh unpacks into
# third_party/tree-sitter-python (generated C, never committed). muh scan's
# per-file analysis (src/scan/pyfile.c) parses Python with them.
set(MUH_TS_PY ${CMAKE_SOURCE_DIR}/third_party/tree-sitter-python/src)
if(NOT TREESITTER_FOUND)
  message(FATAL_ERROR "tree-sitter runtime not found (apt-get install libtree-sitter-dev; see scripts/deps.sh)")
endif()
if(NOT EXISTS ${MUH_TS_PY}/parser.c)
  message(FATAL_ERROR "tree-sitter-python grammar missing in ${MUH_TS_PY}: run scripts/deps.sh")
endif()
# The generated grammar is not our code: build it without our warnings.
set_source_files_properties(${MUH_TS_PY}/parser.c ${MUH_TS_PY}/scanner.c
  PROPERTIES COMPILE_OPTIONS "-w;-Wno-error" INCLUDE_DIRECTORIES "${CMAKE_SOURCE_DIR}/src/ts_compat;${MUH_TS_PY}")
list(APPEND MUH_EXTRA_SOURCES ${MUH_TS_PY}/parser.c ${MUH_TS_PY}/scanner.c)
list(APPEND MUH_EXTRA_LIBS PkgConfig::TREESITTER)
# muh scan parses files on several threads.
find_package(Threads REQUIRED)
list(APPEND MUH_EXTRA_LIBS Threads::Threads)
