# cmake/mpi.cmake — Open MPI (Debian's libopenmpi-dev) for the pool's
# transport across hosts (src/eval/pool_mpi.c). Optional: without it the pool
# still runs local workers and `--mpi` says muh was built without MPI.
# -DMUH_MPI=OFF leaves it out even when installed. Only mpi.h is used at
# build time: src/eval/pool_mpi.c opens libmpi with dlopen when muh runs under
# an MPI launcher, so that no other muh process loads Open MPI's libraries.
option(MUH_MPI "build the MPI transport of the evaluator pool when MPI is found" ON)
if(MUH_MPI)
  find_package(MPI COMPONENTS C QUIET)
endif()
if(MUH_MPI AND MPI_C_FOUND)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/src/eval/pool_mpi.c PROPERTIES COMPILE_DEFINITIONS MUH_HAVE_MPI=1
    INCLUDE_DIRECTORIES "${MPI_C_INCLUDE_DIRS}")
  message(STATUS "muh: MPI transport of the pool: ${MPI_C_LIBRARIES}")
else()
  message(STATUS "muh: MPI not found: the pool runs local workers only")
endif()
