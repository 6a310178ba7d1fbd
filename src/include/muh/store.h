/*
 * store.h — the SQLite store of runs, variants and measurements.
 *
 * One file (default muh.db), WAL mode, one transaction per finished
 * measurement: a kill -9 at any moment loses at most the variant in flight,
 * and never leaves a half-written row. Tables (docs/store.md):
 *
 *   runs(id, spec_hash, spec_path, spec_name, instance, problem, backend,
 *        hw_profile, tool_version, host, noise, created_ms, updated_ms,
 *        spec_text, spec_abs)
 *   claims(run_id, key, pid, host, started_ms)     variants being measured
 *   variants(id, spec_hash, key, config)           UNIQUE(spec_hash, key)
 *   measurements(id, run_id, variant_id, status, samples, nsamples, median,
 *        min, mad, ci_lo, ci_hi, warmups, fingerprint, fp_detail, error,
 *        max_abs_err, rel_l2_err, sm_clock_mhz, power_w, temp_c, t_build,
 *        t_verify, t_time, started_ms, finished_ms)  UNIQUE(run_id, variant_id)
 *   retimes(run_id, key, burst_rank, burst_s, burst_mhz, sustained_s,
 *        sustained_mhz, warm_s, finished_ms)        the top k at sustained clocks
 *   decisions(run_id, round, pos, key, role, status, score, slo_met, why,
 *        metrics, level, finished_ms)   the finalists and the baseline, re-deployed
 *                                in paired rounds (decide.h)
 *
 * A run is identified by (spec hash, problem instance, backend, hardware
 * profile). Opening the same run again resumes it: store_has() says which
 * variants are finished, and the caller skips them. fresh = 1 deletes the
 * earlier runs of that identity and starts over.
 *
 * muh tune uses: store_open, store_begin_run, store_has / store_get (skip or
 * replay), store_claim_or_get before and store_put + store_release after each
 * eval_measure, store_raise_noise, store_close. Reading commands (report,
 * export, tune --replay, patch --from) use store_open_ro, which never writes.
 *
 * A file is a muh store when its meta table has a schema_version; any other
 * file (another program's SQLite database, text, a corrupt store, a newer
 * schema) is refused and left byte-identical: MUH_EINPUT when the file is
 * not a muh store at all (text, empty or missing for a reader, a folder,
 * another program's database), MUH_EENV when muh cannot use the store
 * (corrupt, a newer schema, unreadable).
 */
#ifndef MUH_STORE_H
#define MUH_STORE_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "muh/diag.h"
#include "muh/eval.h"
#include "muh/spec.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct muh_store muh_store;

typedef struct store_run_info {
	const char *spec_hash;    /* required; see store_spec_hash */
	const char *spec_path;    /* may be NULL */
	const char *spec_name;    /* may be NULL */
	int64_t instance;         /* problem instance index */
	const char *problem;      /* e.g. "N=256"; may be NULL */
	const char *backend;      /* required */
	const char *hw_profile;   /* profile name (or JSON); may be NULL */
	const char *tool_version; /* may be NULL: "muh MUH_VERSION" is stored */
	const char *spec_text;    /* the spec's whole text; may be NULL. Kept, with
				     the spec's resolved absolute path, so that
				     readers need not find the file again */
} store_run_info;

/* store_put's "not inserted": another process's measurement of the variant
 * was there first, and is kept. Not a muh_status; d->msg says so. */
#define STORE_KEPT 16
/* A claim of another host is taken over after this long (its pid cannot be
 * checked from here). */
#define STORE_CLAIM_REMOTE_MS (24LL * 3600 * 1000)

/* One stored measurement, as store_foreach hands it out. */
typedef struct store_row {
	int64_t run_id;
	const char *spec_name;
	int64_t instance;
	const char *key;
	const char *config; /* JSON object of the param values */
	const muh_measurement *m;
} store_row;

enum store_format { STORE_CSV = 0, STORE_JSON = 1, STORE_T4 = 2 };

/* Opens the store at path for writing; creates one only where the file is
 * missing or empty (0 bytes, or an SQLite database without any table).
 * MUH_EENV (MUH_EINPUT when the file is not a muh store at all) with d at
 * path (its file; the message does not repeat it), and the file
 * untouched, when it cannot be opened or written, is not a muh store,
 * fails PRAGMA quick_check or has a schema_version newer than this muh's. */
int store_open(const char *path, muh_store **out, muh_diag *d);
/* Opens the store at path read-only (URI mode=ro; immutable=1 when no
 * -wal file lies beside it, so every commit is in the file, or when its
 * directory is not writable, as WAL readers need a -shm file there): the
 * file is never written, and nothing is made beside it except the -shm
 * that reading a -wal left by a writer needs (a writer at work, or killed).
 * Refuses what store_open refuses, and also a missing or empty file.
 * Writes through it fail. */
int store_open_ro(const char *path, muh_store **out, muh_diag *d);
void store_close(muh_store *st);

/* Hex hash of a spec's text (what identifies "the same spec"). buf >= 17. */
void store_spec_hash(const char *text, size_t len, char *buf);

/* Finds the latest run with ri's identity, or creates one; fresh != 0 deletes
 * the earlier runs (and their measurements) of that identity first. Sets
 * *run and *resumed (1 when an existing run was reopened). */
int store_begin_run(muh_store *st, const store_run_info *ri, int fresh, int64_t *run, int *resumed,
		    muh_diag *d);
/* The latest run with this identity (backend/hw_profile may be NULL = any);
 * 0 when none. For replay. */
int store_find_run(muh_store *st, const char *spec_hash, int64_t instance, const char *backend,
		   const char *hw_profile, int64_t *run, muh_diag *d);
/* The latest run of a spec called spec_name, for this problem instance
 * with these problem values ("NAME=VALUE,...", as runs record them; NULL:
 * any),
 * whatever the spec's text (edited since, or a copy with other measure.*
 * settings); 0 when none. Writes the run's spec path into path (n bytes). */
int store_find_run_named(muh_store *st, const char *spec_name, int64_t instance, const char *problem,
			 int64_t *run, char *path, size_t n, muh_diag *d);

/* Records the finished measurement m of v in run, in one transaction.
 * MUH_OK when m's row was inserted; STORE_KEPT (d->msg says so) when the
 * variant already had a measurement in run, which is left as it is: the
 * caller then uses that one (store_get), never its own m. */
int store_put(muh_store *st, int64_t run, const muh_variant *v, const muh_measurement *m, muh_diag *d);
/* Like store_put, but a measurement the variant already has in run is
 * replaced (a re-measurement after drift), in the same one transaction. */
int store_replace(muh_store *st, int64_t run, const muh_variant *v, const muh_measurement *m, muh_diag *d);
/* 1 when key has a finished measurement in run, 0 when not, <0 on error. */
int store_has(muh_store *st, int64_t run, const char *key);
/* Reads key's measurement in run into *m (caller frees). 1 found, 0 not. */
int store_get(muh_store *st, int64_t run, const char *key, muh_measurement *m);
/* Number of measurements in run (all statuses). */
int64_t store_count(muh_store *st, int64_t run);
/* Records the machine noise estimate of run (a fraction): the larger of
 * noise and what the run holds, in one statement, so that the stored noise
 * is the largest any tune of the run timed (its variants are timings of all
 * of them) also when two tunes write to one run at once. A noise that is
 * not finite changes nothing. */
int store_raise_noise(muh_store *st, int64_t run, double noise);

/* Claims key in run for this process before it measures it, in one
 * transaction with the checks: 1 claimed (measure it, store_put, then
 * store_release), 0 when key is already measured in run or claimed by a
 * live process (on this host; by pid), -1 on error (d->msg). The claim of a
 * dead process (kill -9) is taken over; a claim of this process is its own. */
int store_claim(muh_store *st, int64_t run, const char *key, muh_diag *d);
/* Drops this process's claim of key in run (none: MUH_OK). */
int store_release(muh_store *st, int64_t run, const char *key);
/* store_claim, waiting while another live process measures key: 1 claimed
 * (*m is empty: measure it), 0 when *m holds key's stored measurement (the
 * caller frees it), -1 on error or when *stop became nonzero while waiting. */
int store_claim_or_get(muh_store *st, int64_t run, const char *key, muh_measurement *m, muh_diag *d,
		       volatile sig_atomic_t *stop);

/* One variant of a run timed again at sustained clocks (measure.retime_top,
 * session_sustained): its time and SM clock when the search ranked it
 * (burst) and after warm_s seconds of load (sustained). Times are the
 * objective's score (seconds); NAN where not measured or not ok. */
typedef struct store_retime {
	const char *key;
	int burst_rank; /* 1-based, in the search's ranking */
	double burst_s, burst_mhz;
	double sustained_s, sustained_mhz;
	double warm_s;
} store_retime;

/* Replaces the re-timing of run with rows[0..n) (n may be 0: none), in one
 * transaction: a later re-timing of the run (a resumed tune) replaces the
 * earlier one whole, never half. */
int store_set_retimes(muh_store *st, int64_t run, const store_retime *rows, size_t n, muh_diag *d);
/* Calls cb for every re-timed variant of run, in burst_rank order; stops
 * when cb returns nonzero (and returns that value). A store without the
 * table (an earlier muh's) has none. */
int store_foreach_retime(muh_store *st, int64_t run, int (*cb)(void *ud, const store_retime *row), void *ud);

/* One fresh measurement of the decision stage (decide.h): variant key,
 * the baseline (role 0) or a finalist (role 1), measured as the pos-th of
 * round `round` (0-based); role 2 is one marker row of a stage that had no
 * finalist (decide.h, DECIDE_ROLE_NONE). score is the objective's (lower is better; NAN
 * when not ok); slo_met 1 when it met every SLO; why the failure or the
 * first SLO missed; metrics the measurement's JSON metrics; level the
 * confidence level the stage judges each look at (decide_level). */
typedef struct store_decision {
	int round, pos;
	const char *key;
	int role;
	const char *status; /* eval_status_name */
	double score;
	int slo_met;
	const char *why;
	const char *metrics;
	double level;
} store_decision;

/* Adds one row (one transaction: a kill keeps every row added before it). */
int store_add_decision(muh_store *st, int64_t run, const store_decision *row, muh_diag *d);
/* Forgets the decision rows of run (a decision over other finalists). */
int store_clear_decisions(muh_store *st, int64_t run, muh_diag *d);
/* Calls cb for every decision row of run, by round then pos; stops when cb
 * returns nonzero (and returns that value). A store without the table (an
 * earlier muh's) has none. */
int store_foreach_decision(muh_store *st, int64_t run, int (*cb)(void *ud, const store_decision *row),
				   void *ud);

/* Calls cb for every measurement of run (0 = all runs) in order of
 * measurement; stops when cb returns nonzero (and returns that value). */
int store_foreach(muh_store *st, int64_t run, int (*cb)(void *ud, const store_row *row), void *ud);

/* Writes the measurements of run (0 = all) to f as CSV, JSON or T4 (the
 * results schema shared by Kernel Tuner, KTT and BAT, version 1.0.0). */
/* One run as stored. Strings live until the callback returns. */
typedef struct store_run {
	int64_t id;
	const char *spec_hash, *spec_path, *spec_name, *problem, *backend, *hw_profile;
	int64_t instance;
	double noise; /* NAN when not measured */
	int64_t nmeasurements;
	const char *spec_text; /* the spec's text as measured; NULL for runs of an older muh */
	const char *spec_abs;  /* its resolved absolute path then; may be NULL */
} store_run;

/* The spec of run r: its stored text, parsed with its stored path (for
 * messages and the files it names), else the file at spec_abs or spec_path.
 * MUH_OK and *out (spec_free), or spec_load's/spec_parse's error. */
int store_run_spec(const store_run *r, muh_spec **out, muh_diag *d);

/* Calls cb for every run, in id order; stops when cb returns nonzero (and
 * returns that value). */
int store_foreach_run(muh_store *st, int (*cb)(void *ud, const store_run *run), void *ud);

/* Calls cb once, for the run with this id, and returns what cb returns
 * (MUH_OK, or cb's own error other than MUH_EINPUT, which says below that
 * the run is not there); cb may be NULL, to ask only whether the run
 * is there. MUH_EINPUT, without calling cb, when the store has no run of
 * that id; MUH_EENV when the store's runs cannot be read. */
int store_with_run(muh_store *st, int64_t id, int (*cb)(void *ud, const store_run *run), void *ud);

/* One run's best variant, as best_of_run ranks it (best_marks): what the
 * exports mark, so that report, plots, patch and the exports name one best. */
typedef struct store_mark {
	int64_t run;
	const char *key; /* canonical key; not owned */
} store_mark;

/* Writes the measurements of run (0: every run) to f as fmt. best[0..nbest)
 * (may be NULL, 0) names each run's best: the CSV's `best` column is 1 on
 * its row and 0 on the others; the JSON and T4 runs carry "best" (its key,
 * null for a run without one) and JSON's measurements "best": true/false.
 * MUH_OK, MUH_EENV (the store or f failed; d says which), MUH_ENOMEM. */
int store_export(muh_store *st, FILE *f, enum store_format fmt, int64_t run, const store_mark *best,
			 size_t nbest, muh_diag *d);

MUH_END_DECLS

#endif
