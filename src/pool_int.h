/*
 * pool_int.h — between pool.c and its MPI transport, pool_mpi.c (internal).
 */
#ifndef MUH_POOL_INT_H
#define MUH_POOL_INT_H

/* The worker's request handler, shared by the pipe worker and MPI ranks:
 * a state, one request line in, the reply (malloc'd; NULL for none) out;
 * *quit set for "quit". */
void *pool_serve_state(void);
void pool_serve_state_free(void *state);
char *pool_serve_line(void *state, const char *line, int *quit);

/* MPI transport (stubs failing when built without MPI): the world's size,
 * a NUL-terminated message to a rank (0, or -1), and the next message from
 * one rank or any (malloc'd; NULL on failure; *rank says who). */
int pool_mpi_size(void);
int pool_mpi_send_to(int rank, const char *msg);
char *pool_mpi_recv_from(int rank);
char *pool_mpi_recv_any(int *rank);

#endif
