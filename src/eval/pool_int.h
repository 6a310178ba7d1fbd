/*
 * pool_int.h — pool.c's MPI transport, pool_mpi.c (internal): pool.c calls it;
 * it calls nothing of pool.c.
 */
#ifndef MUH_POOL_INT_H
#define MUH_POOL_INT_H

#include "muh/diag.h"

/* MPI transport (stubs failing when built without MPI): the world's size,
 * a NUL-terminated message to a rank (0, or -1), and the next message from
 * one rank or any (malloc'd; NULL on failure; *rank says who). */
int pool_mpi_size(void);
/* MUH_OK, or MUH_EENV with d saying why libmpi could not be opened under
 * the MPI launcher (pool_mpi_init found it missing). */
int pool_mpi_check(muh_diag *d);
int pool_mpi_send_to(int rank, const char *msg);
char *pool_mpi_recv_from(int rank);
char *pool_mpi_recv_any(int *rank);

#endif
