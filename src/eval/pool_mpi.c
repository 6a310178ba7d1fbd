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
 * muh does not link libmpi (Open MPI and its ~10 libraries took every muh
 * process's start a few ms): only mpi.h is used at build time, and
 * pool_mpi_init opens libmpi.so.40 with dlopen under a launcher. The
 * functions go into mpi (below); MPI_COMM_WORLD, MPI_CHAR and
 * MPI_ERRORS_RETURN are, in Open MPI, addresses of libmpi's globals
 * (ompi_mpi_comm_world, ...), so they are looked up with dlsym too. libmpi
 * is opened RTLD_GLOBAL: the plugins it loads itself need its symbols.
 *
 * Owns: the dlopen of libmpi (never closed), MPI_Init/Finalize, the message
 * framing (one MPI message per line, tag 17). Must never: block rank 0 on
 * one rank while another has answered (rank 0 receives from
 * MPI_ANY_SOURCE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "muh/muh.h"
#include "muh/pool.h"
#include "pool_int.h"

#ifdef MUH_HAVE_MPI
#include <dlfcn.h>
#include <mpi.h>

#include "dl_table.h"

#ifndef OPEN_MPI
#error "muh's MPI transport opens Open MPI's libmpi.so.40 at run time; configure with -DMUH_MPI=OFF for another MPI"
#endif

/* The part of libmpi muh uses, opened by mpi_open. */
static struct {
	int (*Init)(int *argc, char ***argv);
	int (*Finalize)(void);
	int (*Comm_set_errhandler)(MPI_Comm comm, MPI_Errhandler eh);
	int (*Comm_rank)(MPI_Comm comm, int *rank);
	int (*Comm_size)(MPI_Comm comm, int *size);
	int (*Send)(const void *buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm);
	int (*Recv)(void *buf, int count, MPI_Datatype t, int src, int tag, MPI_Comm comm, MPI_Status *st);
	int (*Probe)(int src, int tag, MPI_Comm comm, MPI_Status *st);
	int (*Get_count)(const MPI_Status *st, MPI_Datatype t, int *count);
	MPI_Comm comm_world;
	MPI_Datatype char_type;
	MPI_Errhandler errors_return;
} mpi;

static char mpi_why[512]; /* why libmpi could not be opened; empty: it was, or was not tried */

/* Opens libmpi (or $MUH_LIBMPI, a test's stand-in) and fills mpi. 0, or -1
 * with mpi_why saying what is missing. */
static int mpi_open(void)
{
	const dl_sym e[] = {
		{"MPI_Init", (void **)&mpi.Init},
		{"MPI_Finalize", (void **)&mpi.Finalize},
		{"MPI_Comm_set_errhandler", (void **)&mpi.Comm_set_errhandler},
		{"MPI_Comm_rank", (void **)&mpi.Comm_rank},
		{"MPI_Comm_size", (void **)&mpi.Comm_size},
		{"MPI_Send", (void **)&mpi.Send},
		{"MPI_Recv", (void **)&mpi.Recv},
		{"MPI_Probe", (void **)&mpi.Probe},
		{"MPI_Get_count", (void **)&mpi.Get_count},
		{"ompi_mpi_comm_world", (void **)&mpi.comm_world},
		{"ompi_mpi_char", (void **)&mpi.char_type},
		{"ompi_mpi_errors_return", (void **)&mpi.errors_return},
	};
	void *h = dl_open_table("MUH_LIBMPI", "libmpi.so.40", RTLD_NOW | RTLD_GLOBAL, e, sizeof(e) / sizeof(e[0]),
				"muh --mpi under mpirun needs it (apt-get install libopenmpi3)",
				"muh --mpi needs Open MPI 3 or later (apt-get install libopenmpi3)", mpi_why,
				sizeof(mpi_why));
	return h ? 0 : -1;
}

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
	if (mpi_open() || mpi.Init(argc, argv) != MPI_SUCCESS)
		return 0;
	started = 1;
	/* errors come back as codes: a failed send is a lost rank to report */
	mpi.Comm_set_errhandler(mpi.comm_world, mpi.errors_return);
	int rank = 0;
	mpi.Comm_rank(mpi.comm_world, &rank);
	mpi.Comm_size(mpi.comm_world, size);
	return rank;
}

int pool_mpi_check(muh_diag *d)
{
	if (mpi_why[0])
		return diag_errorf(d, "pool: %s", mpi_why), MUH_EENV;
	return MUH_OK;
}

void pool_mpi_finalize(void)
{
	if (started)
		mpi.Finalize();
	started = 0;
}

int pool_mpi_size(void)
{
	int n = 1;
	if (started)
		mpi.Comm_size(mpi.comm_world, &n);
	return n;
}

int pool_mpi_send_to(int rank, const char *msg)
{
	if (!started)
		return -1;
	return mpi.Send(msg, (int)strlen(msg) + 1, mpi.char_type, rank, TAG, mpi.comm_world) == MPI_SUCCESS ? 0 : -1;
}

static char *recv_from(int src, int *rank)
{
	MPI_Status st;
	if (!started || mpi.Probe(src, TAG, mpi.comm_world, &st) != MPI_SUCCESS)
		return NULL;
	int n = 0;
	mpi.Get_count(&st, mpi.char_type, &n);
	char *b = malloc((size_t)n + 1);
	if (!b)
		return NULL;
	if (mpi.Recv(b, n, mpi.char_type, st.MPI_SOURCE, TAG, mpi.comm_world, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
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

int pool_mpi_check(muh_diag *d)
{
	(void)d;
	return MUH_OK;
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

#endif
