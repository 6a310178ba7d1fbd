/*
 * pool.h — measuring on several devices at once: one evaluator process per
 * device on this host, or one MPI rank per device across hosts, fed by one
 * caller that owns the strategy and the store.
 *
 * The caller (muh tune's loop, or any program linking libmuh) submits
 * configurations; the pool hands each to an idle worker and gives results
 * back as they finish, in any order. A worker is a separate process (its own
 * evaluator, opened after CUDA_VISIBLE_DEVICES was set for it), so a device
 * context is never shared or forked; each measurement runs inside that
 * evaluator's isolated child, so a crashing kernel costs a variant, never a
 * worker.
 *
 * Faults:
 *   - a worker that dies (or stays silent past hang_s on one variant) is
 *     killed, reaped and started again; its variant is requeued once, and
 *     the second loss is that variant's result: status crash, "the worker
 *     died twice measuring it". A worker that cannot start again is retired;
 *     when none is left the pool fails (MUH_EENV);
 *   - an MPI rank that is lost cannot be restarted: under Open MPI the job
 *     ends, and the caller's store (written as results arrive) is where the
 *     run resumes, nothing measured lost.
 *
 * Devices: every worker reports its device's model when it opens; a pool
 * whose workers see different models is refused, since their times are not
 * comparable in one run (the store keys runs by hardware profile).
 *
 * Protocol (JSON lines, worker side in pool_worker_serve):
 *   -> {"op":"open","spec":PATH,"hw":REF|null,"instance":I,"worker":W}
 *   <- {"ok":true,"device":"NVIDIA H200","pid":P} | {"ok":false,"error":TEXT}
 *   -> {"op":"measure","tag":"T","cfg":[i0,i1,...]}   (T decimal, any uint64)
 *   <- {"tag":"T","m":MEASUREMENT}         (measurement_to_json)
 *   -> {"op":"quit"}                        (or end of input)
 */
#ifndef MUH_POOL_H
#define MUH_POOL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/eval.h"
#include "muh/strategy.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct muh_pool muh_pool;

typedef struct pool_opts {
	const char *spec_path;  /* the spec every worker loads */
	const char *hw;         /* hardware profile reference, or NULL for the spec's */
	size_t instance;        /* problem instance */
	size_t nparams;         /* values per configuration (space_nparams) */
	size_t nworkers;        /* local workers (ignored with mpi) */
	/* CUDA_VISIBLE_DEVICES of worker i, nworkers entries; NULL: leave it
	 * as it is (the cpu backends) */
	const char *const *devices;
	/* the worker program: argv, NULL-terminated; it must end up calling
	 * pool_worker_serve(0, 1) (muh's is {"/proc/self/exe", "pool-worker"}) */
	const char *const *worker_argv;
	int mpi;                /* 1: workers are MPI ranks 1..size-1 (pool_mpi_available) */
	double hang_s;          /* a worker silent this long on one variant is restarted; 0: never */
} pool_opts;

typedef struct pool_result {
	uint64_t tag;          /* as submitted */
	const uint32_t *cfg;   /* as submitted; valid until the next pool_wait */
	muh_measurement m;     /* the caller owns it: measurement_free */
	size_t worker;         /* who measured it */
	int attempts;          /* 1, or 2 after a worker died on it */
} pool_result;

/* Starts the workers and opens every one's evaluator; all must report the
 * same device model. MUH_EENV when a worker cannot start (d says which and
 * why), MUH_EINPUT for mixed device models or bad options. */
int pool_open(const pool_opts *o, muh_pool **out, muh_diag *d);

/* Queues cfg (o->nparams value indices) under tag. MUH_OK or MUH_ENOMEM. */
int pool_submit(muh_pool *p, const uint32_t *cfg, uint64_t tag);

/* Waits for the next finished variant. MUH_OK with *r filled; MUH_EFINDING
 * when nothing is queued or in flight, or *stop (may be NULL) was set (the
 * variants in flight are then abandoned: pool_close stops their workers);
 * MUH_EENV when no worker is left. */
int pool_wait(muh_pool *p, pool_result *r, const volatile sig_atomic_t *stop, muh_diag *d);

size_t pool_size(const muh_pool *p);      /* workers alive */
size_t pool_idle(const muh_pool *p);      /* alive and without a variant */
size_t pool_pending(const muh_pool *p);   /* queued + in flight */
size_t pool_restarts(const muh_pool *p);  /* workers started again after dying */
const char *pool_device(const muh_pool *p); /* the device model every worker has */
/* 1 when the local workers share this host's CPU (a cpu, command or engine
 * backend): they build side by side but time one at a time, taking turns
 * at a lock file, so that no worker's timing runs beside another's. */
int pool_serial_timing(const muh_pool *p);
int pool_is_mpi(const muh_pool *p);         /* 1: the workers are MPI ranks */

/* The search of session s measured by pool p (src/session/session_pool.c): batches
 * from session_next to every idle worker, the store answering first,
 * results recorded as they arrive; the defaults timed twice through the
 * pool for the noise. on_event is called for every finished variant as in
 * strategy.h; *stop (may be NULL) set stops it after the results in hand.
 * r (free with strategy_result_free) is the session's history. */
struct muh_session;
int session_tune_pool(struct muh_session *s, muh_pool *p, strategy_event_fn on_event, void *ctx,
		      strategy_result *r, const volatile sig_atomic_t *stop, muh_diag *d);

/* Stops the workers (quit, then SIGKILL after a grace) and frees p. */
void pool_close(muh_pool *p);

/* The worker's side: serves the protocol on in_fd/out_fd until "quit" or end
 * of input. Its own stdout is moved to stderr first so that nothing a backend
 * prints can be mistaken for a reply. Returns 0 at a clean end. */
int pool_worker_serve(int in_fd, int out_fd);

/* 1 when libmuh was built with MPI (pool_opts.mpi works). */
int pool_mpi_available(void);

/* MPI: call from main() of every rank before anything else that reads argv;
 * returns the rank (0 when MPI is absent or not launched by mpirun) and sets
 * *size. Ranks above 0 should then call pool_mpi_serve() and exit with it. */
int pool_mpi_init(int *argc, char ***argv, int *size);
int pool_mpi_serve(void);
void pool_mpi_finalize(void);

MUH_END_DECLS

#endif
