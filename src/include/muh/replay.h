/*
 * replay.h — measurements already made, as an objective: replay (simulation)
 * mode, `muh tune SPEC --replay FILE`.
 *
 * A replay table maps configurations of a space to what was measured for
 * them (time and status). replay_objective() answers the search from it, so
 * a strategy runs with no device, deterministically for a given seed; that
 * is how strategies are compared (bench/strategies.sh) and tested.
 *
 * Sources:
 *   - a CSV file with one column per param (named as the param, or mapped),
 *     a time column (time_s, time_ms, time_us or time_ns; the suffix gives
 *     the unit), optionally a status column ("ok" or a failure kind) and
 *     a column per problem symbol (the rows of other problem instances are
 *     left out); lines starting with '#' are comments. corpora/h200-fused-moe/
 *     sweep_M256.csv and tests/fixtures/spaces/ are examples;
 *   - the SQLite store: the session fills a table with replay_add_row()
 *     for every measurement of the spec's run at the instance
 *     (src/session/session.c, load_store_replay).
 */
#ifndef MUH_REPLAY_H
#define MUH_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/space.h"
#include "muh/strategy.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct muh_replay muh_replay;

/* Status codes a replay objective reports (strategy_measurement.status). */
enum replay_status {
	REPLAY_OK = 0,
	REPLAY_FAILED = 1,       /* measured, and failed: status_text says how */
	REPLAY_NOT_MEASURED = 2, /* the table has no row for this configuration */
};

typedef struct replay_stats {
	uint64_t rows;      /* data rows read */
	uint64_t used;      /* rows that became entries */
	uint64_t failed;    /* ... of which failed (status not ok) */
	uint64_t invalid;   /* rows whose configuration breaks a constraint */
	uint64_t outside;   /* rows with a value that is not one of the param's */
	uint64_t duplicate; /* rows for a configuration already read (the first wins) */
	uint64_t covered;   /* distinct valid configurations with an entry */
	/* CSV only: rows of another problem instance (a column named as a
	 * problem symbol holds another value than the space's instance), not
	 * counted in any of the above but rows */
	uint64_t other_problem;
	/* CSV only: the first problem symbol with several values that the CSV
	 * has no column for (owned by the spec), else NULL: its rows cannot be
	 * told apart by problem instance, and are taken as this space's */
	const char *unnamed_symbol;
} replay_stats;

/* An empty table for sp (which must outlive it). */
int replay_new(const muh_space *sp, muh_replay **out);
void replay_free(muh_replay *rp);

/* Adds what was measured for cfg (valid in the space): time_s when status
 * is REPLAY_OK, else a failure described by status_text (copied; may be
 * NULL). The first entry for a configuration wins: returns 1 for a
 * duplicate, 0 when added, MUH_EINPUT when cfg is invalid, MUH_ENOMEM. */
int replay_add(muh_replay *rp, const uint32_t *cfg, double time_s, int status,
               const char *status_text);
/* One row of a source (a CSV line, a store's measurement), counted in the
 * stats: cfg NULL when a value is not one of the params' (outside); a cfg
 * the constraints reject is invalid; else replay_add, counting the row as
 * used (and failed) or duplicate. Returns MUH_OK or MUH_ENOMEM. */
int replay_add_row(muh_replay *rp, const uint32_t *cfg, double time_s, int status,
                   const char *status_text);

/* Loads a CSV file into a new table. colmap maps params to columns whose
 * names differ: NULL-terminated "PARAM=COLUMN" strings, and "time=COLUMN"
 * for the time column (may be NULL); a problem symbol maps the same way.
 * A column named as a problem symbol tells the rows' problem instance: a
 * row whose value there is not the space's instance's is counted as
 * other_problem and left out, so one CSV can hold a sweep of several
 * sizes. Returns MUH_OK, MUH_EINPUT (d says where: a colmap name that is
 * no param, problem symbol, time or status; a missing column, a mapped
 * problem column included; a malformed time or problem value), MUH_EENV
 * (cannot read). */
int replay_load_csv(const muh_space *sp, const char *path, const char *const *colmap,
                    muh_replay **out, muh_diag *d);

void replay_get_stats(const muh_replay *rp, replay_stats *st);

/* What the table holds for cfg: 1 and *m filled when it has an entry, else
 * 0 (and *m says REPLAY_NOT_MEASURED). */
int replay_lookup(const muh_replay *rp, const uint32_t *cfg, strategy_measurement *m);

/* The best ok entry: its space index and time; 0 when there is none. */
int replay_best(const muh_replay *rp, uint64_t *index, double *time_s);

/* The times of every ok entry, sorted ascending, into a new array (*times,
 * freed by the caller; NULL when there is none) of *n. MUH_OK or
 * MUH_ENOMEM. */
int replay_ok_times(const muh_replay *rp, double **times, size_t *n);

/* A strategy_objective over a table (ctx is the muh_replay *). Never
 * fails: a configuration without an entry is a failed variant
 * (REPLAY_NOT_MEASURED, "not_measured"). */
int replay_objective(void *ctx, const uint32_t *cfg, strategy_measurement *m);

MUH_END_DECLS

#endif
