/*
 * tune_flow.h — the decisions of a tune that are not the search itself:
 * what a budget means in evaluations, which devices a pool runs on,
 * whether and how the decision stage follows a search, and the --json
 * events a search tells.
 *
 * `muh tune` and an engine tuning online ask the same questions before and
 * after session_tune (session.h), and tell the same --json events; the
 * answers live here so that both get one answer. Nothing here prints or
 * exits: errors come back as a status with the words in a muh_diag, JSON
 * as malloc'd text.
 */
#ifndef MUH_TUNE_FLOW_H
#define MUH_TUNE_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "muh/decide.h"
#include "muh/diag.h"
#include "muh/muh.h"
#include "muh/pool.h"
#include "muh/session.h"
#include "muh/strategy.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* A search's most evaluations from a budget: "N" (1 to 1000000000), or
 * "N%" of the space's valid configurations (0 < N <= 100; at least 1).
 * MUH_OK with *out, or MUH_EINPUT with d saying what a budget is. */
int tune_flow_budget(const char *budget, uint64_t valid, uint64_t *out, muh_diag *d);

#define TUNE_FLOW_MAX_DEVICES 64

/* The devices of a pool: "0,1,3" (numbers up to 1023, none twice, at most
 * 64), or "all" (every CUDA device). list[0..*n) are malloc'd names
 * (tune_flow_devices_free). MUH_EINPUT for a bad list, MUH_EENV when "all"
 * finds no device (d says why, after "--devices all: "). devices NULL:
 * none (*n = 0). */
int tune_flow_devices(const char *devices, char *list[TUNE_FLOW_MAX_DEVICES], size_t *n, muh_diag *d);
void tune_flow_devices_free(char *list[TUNE_FLOW_MAX_DEVICES], size_t n);

/* Opens the pool of session s (opened from spec path with so): one worker
 * per device of list[0..n) running this program's pool-worker, or with
 * mpi the other MPI ranks; a worker silent for 4x the target's timeout
 * plus a minute is restarted. pool_open's status. */
int tune_flow_pool_open(const char *path, muh_session *s, const muh_session_opts *so, char *const *list,
				size_t n, int mpi, muh_pool **out, muh_diag *d);

/* tune_flow_devices then tune_flow_pool_open: the pool of devices (or
 * mpi) for s. *bad_list is 1 when the error is the device list's
 * (MUH_EINPUT: a usage error), else 0. */
int tune_flow_open_pool(const char *path, muh_session *s, const muh_session_opts *so, const char *devices,
				int mpi, muh_pool **out, int *bad_list, muh_diag *d);

/* 1 when s measures through the engine backend (a server per variant). */
int tune_flow_is_engine(muh_session *s);

/* How many finalists the decision stage re-measures: asked (>= 0), else 2
 * for every live run, kernel or engine (a replay has no stage: nothing to
 * measure again). */
long tune_flow_finalists(long asked);

/* 1 when a search found a best within the SLOs (else exit 1: a finding). */
int tune_flow_found(const strategy_result *r);

/* 1 when s can run the decision stage: it measures through its own
 * evaluator, or it searched through a pool of this host's devices
 * (local_pool: --devices, not MPI ranks elsewhere) and its target is a
 * kernel, which the stage measures through an evaluator of its own. */
int tune_flow_can_decide(muh_session *s, int local_pool);

/* 1 when the decision stage runs after a search: a live search (not a
 * replay) that can decide (tune_flow_can_decide), ended well (rc MUH_OK),
 * was not interrupted, found a best within the SLOs, and has finalists
 * (asked as tune_flow_finalists). */
int tune_flow_decides_after(muh_session *s, int local_pool, long asked, int interrupted, const strategy_result *r,
			    int rc);

/* The decision stage's options for s: k finalists, the baseline when it
 * is not the defaults, and rounds (0: the default most rounds). */
void tune_flow_decide_opts(muh_session *s, long k, int rounds, decide_opts *o);

/* The --json event of a search event ev of session s (problem: its
 * instance's): "predicted_fail", "seed_skipped", "default_invalid", or
 * "variant" with the configuration, status, times and, for a
 * measured-metric objective, the metrics. malloc'd text without newline;
 * NULL when out of memory. */
char *tune_flow_event_json(muh_session *s, const strategy_event *ev, const char *problem);

/* The "drift" event of a session note (the defaults moved beyond the
 * noise). malloc'd text; NULL when out of memory. */
char *tune_flow_drift_json(const session_note *n, const char *problem);

MUH_END_DECLS

#endif
