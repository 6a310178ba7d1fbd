/*
 * replay_store.h — a replay, kept: every variant a replay answers is
 * written to a store run (`muh tune SPEC --replay FILE --db STORE`), so that
 * a simulated search can be reported, plotted, exported and transferred
 * from like a measured one.
 *
 * The run's identity is the spec's, the problem instance's and the hardware
 * profile's, with backend "replay" (a replayed run never mixes with a
 * measured one of the same spec). Each answer becomes one measurement: ok
 * with the replayed time as its one sample, or the replayed failure kind
 * (a configuration the source never measured: invalid, "not measured in
 * SOURCE"). Opening the same identity again resumes the run; a variant
 * already in it keeps its row.
 */
#ifndef MUH_REPLAY_STORE_H
#define MUH_REPLAY_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/space.h"
#include "muh/store.h"
#include "muh/strategy.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* The backend name of replayed runs. */
#define REPLAY_STORE_BACKEND "replay"

typedef struct replay_store replay_store;

/* Opens db for writing and begins (fresh: starts over) the replay run of
 * sp's spec at problem instance `instance` for hw_profile (may be NULL).
 * inner/inner_ctx answer the search through replay_store_objective
 * (replay_objective over a table; NULL when the caller stores with
 * replay_store_put);
 * source names what is replayed (for the failure text). MUH_OK and *out,
 * or store_open's / store_begin_run's error with d set. */
int replay_store_open(const char *db, const muh_space *sp, size_t instance, const char *hw_profile,
		      const char *source, int fresh, strategy_objective inner, void *inner_ctx,
		      replay_store **out, muh_diag *d);
/* Stores m, the answer given for cfg (valid in the space). MUH_OK, or
 * MUH_EENV when the store cannot be written (MUH_ENOMEM). A variant already
 * in the run keeps its row. */
int replay_store_put(replay_store *rs, const uint32_t *cfg, const strategy_measurement *m);
/* A strategy_objective (ctx is the replay_store *): asks the inner
 * objective, then stores its answer. A store error ends the search
 * (MUH_EENV). */
int replay_store_objective(void *ctx, const uint32_t *cfg, strategy_measurement *m);
/* The run written to, and the store (owned by rs). */
int64_t replay_store_run(const replay_store *rs);
muh_store *replay_store_store(const replay_store *rs);
/* 1 when the run existed and was resumed. */
int replay_store_resumed(const replay_store *rs);
/* Closes the store; rs may be NULL. */
void replay_store_close(replay_store *rs);

MUH_END_DECLS

#endif
