/*
 * evalset.h — the variants one `muh eval` measures, and what is said of
 * them once measured.
 *
 * A --config key may be partial (names not given keep their defaults) and
 * is checked against the spec with the words a person needs (did you mean,
 * the values a param has). Each measured row is added to an evalset, which
 * keeps what the closing lines need: the fastest, the defaults, counts per
 * status, the variants that built one artifact (twins: what this machine's
 * noise did to identical code), and with --interleave every row's samples
 * for the paired comparison against the fastest.
 *
 * Nothing here prints or exits.
 */
#ifndef MUH_EVALSET_H
#define MUH_EVALSET_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/eval.h"
#include "muh/muh.h"
#include "muh/space.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* Checks every NAME=VALUE of a --config key against sp's spec: an unknown
 * name is an error with the constraint checker's did-you-mean and the names
 * that exist; a value not in the param's list is an error with its values.
 * MUH_OK, or MUH_EINPUT with d placed at the token in key ("--config:1:COL",
 * the key as the source line). */
int evalset_check_key(const muh_space *sp, const char *key, muh_diag *d);

/* Parses a possibly partial key into cfg (space_nparams values): names not
 * given keep their defaults. space_parse_key's status. */
int evalset_parse_key(const muh_space *sp, const char *key, uint32_t *cfg, muh_diag *d);

/* What an eval measured, kept for its closing lines. */
typedef struct evalset {
	int time;            /* the objective is time (the twins line is about times) */
	int keep_samples;    /* --interleave: rows keep their samples (round order) */
	char def_key[1024];  /* the defaults ("" when they violate the constraints) */
	char best_key[1024]; /* the fastest ok row ("" none) */
	muh_measurement best, defm; /* no samples kept */
	long long measured, counts[EVAL_NSTATUS];
	size_t nrows; /* the first EVAL_INTERLEAVE_MAX rows */
	char row_key[EVAL_INTERLEAVE_MAX][1024];
	muh_measurement row[EVAL_INTERLEAVE_MAX];
	char **tkey, **tfp; /* every ok variant whose fingerprint proves its artifact */
	double *tscore;
	size_t tn, tcap;
} evalset;

/* An empty set over sp (time: the objective is time; keep_samples: rows
 * keep their samples for evalset_interleaved). */
void evalset_init(evalset *E, const muh_space *sp, int time, int keep_samples);
void evalset_free(evalset *E);

/* Adds the measured row of the variant called key. */
void evalset_add(evalset *E, const char *key, const muh_measurement *m);

/* The twins of E: variants that built one artifact yet were timed apart.
 * The spread (best_twin_spread: slowest over fastest of one artifact), or
 * NAN when there are none; *twins, *slow and *fast (keys) say who. */
double evalset_twins(const evalset *E, size_t *twins, const char **slow, const char **fast);

/* One variant of an interleaved set against the fastest. */
typedef struct evalset_verdict {
	const char *key;
	const muh_measurement *m;
	double ratio;  /* its time over the fastest's */
	int paired;    /* 1: the median of per-round ratios, with lo-hi its 95% CI */
	double lo, hi;
	size_t rounds; /* with paired */
	int slower;    /* 0: a tie (the CI holds 1; unpaired: within the noise or CIs overlap) */
} evalset_verdict;

/* The paired comparison under --interleave's table: every ok row but the
 * fastest against it, into v (EVAL_INTERLEAVE_MAX); *ok rows were ok, with
 * samples from *lo to *hi. Returns the count of verdicts, or -1 when no ok
 * row is the fastest (nothing to say). */
int evalset_interleaved(const evalset *E, double noise, evalset_verdict *v, size_t *ok, size_t *lo,
				size_t *hi);

/* ---- what muh eval says under its rows (evalset_text.c), on a textout ---- */

/* The best of S against the defaults (a tie within noise, or how much
 * faster), when more than one variant was measured: a result line. */
void evalset_text_best(const textout *o, const evalset *S, double noise);
/* --interleave's closing lines: how the set was timed and each variant
 * against the fastest (paired, or from the medians); with json one
 * "interleaved" JSON line. Nothing when S holds no interleaved set. */
void evalset_text_interleaved(const textout *o, const evalset *S, double noise, int json);
/* Variants that built one artifact yet were timed apart: a result line, a
 * note with json (stdout then holds the rows only), in muh report's words
 * (best_twins_note): noise, the defaults timed twice before the rows (NAN
 * when not measured), is named there as another figure than the spread. */
void evalset_text_twins(const textout *o, const evalset *S, double noise, int json);
/* The closing note: how many were measured, per status (who: what it
 * starts with, "muh eval"), interrupted, the runner restarted. */
void evalset_text_counts(const textout *o, const char *who, const evalset *S, int interrupted, int restarted);

MUH_END_DECLS

#endif
