/*
 * pool_mpi.c — the pool's MPI transport: rank 0 runs the strategy and the
 * store, ranks 1..n-1 serve the pool protocol (pool.h) over MPI messages,
 * each with its own evaluator, whose isolated child runs every kernel.
 *
 * Built with MPI when CMake finds it (MUH_HAVE_MPI); otherwise every call
 * says so and fails, and pool_mpi_init is a no-op that reports rank 0.
 * MPI is started only when a launcher set the process up (mpirun, srun:
 * OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK in the environment), so a
 * plain `muh` never pays for an MPI singleton.
 *
 * Owns: MPI_Init/Finalize, the message framing (one MPI message per line,
 * tag 17). Must never: block rank 0 on one rank while another has answered
 * (rank 0 receives from MPI_ANY_SOURCE).
 */
#include <stdlib.h>
#include <string.h>

#include "muh/pool.h"
#include "pool_int.h"

#ifdef MUH_HAVE_MPI
#include <mpi.h>

#define TAG 17
static int started;

int pool_mpi_available(void)
{
	return 1;
}

int pool_mpi_init(int *argc, char ***argv, int *size)
{
	*size = 1;
	if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMI_SIZE") && !getenv("PMIX_RANK"))
		return 0;
	if (MPI_Init(argc, argv) != MPI_SUCCESS)
		return 0;
	started = 1;
	/* errors come back as codes: a failed send is a lost rank to report */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	int rank = 0;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, size);
	return rank;
}

void pool_mpi_finalize(void)
{
	if (started)
		MPI_Finalize();
	started = 0;
}

int pool_mpi_size(void)
{
	int n = 1;
	if (started)
		MPI_Comm_size(MPI_COMM_WORLD, &n);
	return n;
}

int pool_mpi_send_to(int rank, const char *msg)
{
	if (!started)
		return -1;
	return MPI_Send(msg, (int)strlen(msg) + 1, MPI_CHAR, rank, TAG, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

static char *recv_from(int src, int *rank)
{
	MPI_Status st;
	if (!started || MPI_Probe(src, TAG, MPI_COMM_WORLD, &st) != MPI_SUCCESS)
		return NULL;
	int n = 0;
	MPI_Get_count(&st, MPI_CHAR, &n);
	char *b = malloc((size_t)n + 1);
	if (!b)
		return NULL;
	if (MPI_Recv(b, n, MPI_CHAR, st.MPI_SOURCE, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
		free(b);
		return NULL;
	}
	b[n] = '\0';
	if (rank)
		*rank = st.MPI_SOURCE;
	return b;
}

char *pool_mpi_recv_from(int rank)
{
	return recv_from(rank, NULL);
}

char *pool_mpi_recv_any(int *rank)
{
	return recv_from(MPI_ANY_SOURCE, rank);
}

int pool_mpi_serve(void)
{
	void *st = pool_serve_state();
	int quit = 0, rc = 0;
	while (!quit) {
		char *line = recv_from(0, NULL);
		if (!line) {
			rc = 1;
			break;
		}
		char *reply = pool_serve_line(st, line, &quit);
		free(line);
		if (reply && pool_mpi_send_to(0, reply))
			rc = 1, quit = 1;
		free(reply);
	}
	pool_serve_state_free(st);
	return rc;
}

#else /* no MPI */

int pool_mpi_available(void)
{
	return 0;
}

int pool_mpi_init(int *argc, char ***argv, int *size)
{
	(void)argc, (void)argv;
	*size = 1;
	return 0;
}

void pool_mpi_finalize(void)
{
}

int pool_mpi_size(void)
{
	return 1;
}

int pool_mpi_send_to(int rank, const char *msg)
{
	(void)rank, (void)msg;
	return -1;
}

char *pool_mpi_recv_from(int rank)
{
	(void)rank;
	return NULL;
}

char *pool_mpi_recv_any(int *rank)
{
	(void)rank;
	return NULL;
}

int pool_mpi_serve(void)
{
	return 1;
}
#endif
