/*
 * objective.h — what a run optimizes: one measured metric with a direction,
 * and constraints on other measured metrics (service-level objectives).
 *
 * A spec writes it as
 *
 *     objective: {maximize: output_tokens_per_s, subject_to: ["ttft_p99 <= 2s", "errors == 0"]}
 *
 * Kernel specs say nothing and get {minimize: time}. Metrics are the names a
 * measurement carries: "time" (its median, seconds) and every key of its
 * metrics object (the engine backend's load metrics: output_tokens_per_s,
 * ttft_p99, ...). Latencies are seconds; an SLO may write them "2s",
 * "250ms" or "2".
 *
 * Strategies minimize a time and know nothing else, so the objective turns a
 * measurement into a score that is lower when better: the metric itself for
 * minimize, its reciprocal for maximize (output tokens/s becomes seconds per
 * output token). A measurement that misses an SLO is feasible = 0: the tuner
 * hands it to the strategy as a failure and the reports show it apart, so
 * the throughput winner and the SLO-constrained winner are both known.
 */
#ifndef MUH_OBJECTIVE_H
#define MUH_OBJECTIVE_H

#include <stddef.h>

#include "muh/diag.h"
#include "muh/eval.h"
#include "muh/spec.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

#define OBJECTIVE_MAX_SLO 16

enum objective_op { OBJ_LT, OBJ_LE, OBJ_GT, OBJ_GE, OBJ_EQ, OBJ_NE };

typedef struct objective_slo {
	char metric[64];
	enum objective_op op;
	double value;   /* seconds for latencies */
	char text[128]; /* as written */
} objective_slo;

typedef struct muh_objective {
	char metric[64]; /* "time" by default */
	int maximize;    /* 0: minimize */
	objective_slo slo[OBJECTIVE_MAX_SLO];
	int nslo;
	/* objective.min_gain: the smallest gain a decision may call one (0.005
	 * or "0.5%": a finalist's interval must lie above 1.005). What the
	 * machine moves between starts, which no interval of one start sees:
	 * on the H200 the same two MoE configs differ up to 0.6% from one
	 * machine start to the next. 0 by default. */
	double min_gain;
} muh_objective;

/* {minimize: time}, no SLOs. */
void objective_default(muh_objective *o);

/* Reads objective.* of spec s into *o (the default when absent). metrics
 * lists the names the spec's backend measures (NULL-terminated; "time" is
 * always known); an unknown metric, a bad SLO or an unknown key under
 * objective: is MUH_EINPUT at its file:line:col, naming what was expected. */
int objective_from_spec(const muh_spec *s, const char *const *metrics, muh_objective *o, muh_diag *d);

/* 1 when o is the plain {minimize: time} of kernel specs. */
int objective_is_time(const muh_objective *o);

/* The score strategies minimize: the metric (minimize) or its reciprocal
 * (maximize). NAN when m is not ok or lacks the metric, or a maximized
 * metric is not positive. */
double objective_score(const muh_objective *o, const muh_measurement *m);

/* The score a search minimizes when SLOs may be missed: the score for a
 * feasible measurement; for one that misses SLOs, OBJECTIVE_PENALTY x (1 +
 * the sum of its relative violations), so that every feasible variant
 * ranks first and among the infeasible the nearest miss ranks first (the
 * search has somewhere to go when nothing meets the SLOs yet). *feasible
 * (may be NULL) says which. NAN when objective_score is NAN. */
#define OBJECTIVE_PENALTY 1e12
double objective_search_score(const muh_objective *o, const muh_measurement *m, int *feasible);

/* The metric's value back from a score (what a person reads). */
double objective_value(const muh_objective *o, double score);

/* 1 when ok measurement m meets every SLO; else 0, with the first missed
 * one written into why ("ttft_p99 = 2.41 s, needs <= 2s"). */
int objective_feasible(const muh_objective *o, const muh_measurement *m, char *why, size_t n);

/* The two winners of a set of measurements under an objective: the best
 * that meets every SLO, and the best ignoring them (the throughput winner
 * and the SLO-constrained winner, reported apart). Scores are
 * objective_score's; INFINITY while there is none. Ties keep the first. */
typedef struct objective_winners {
	double best, best_any;
	char key[4096], key_any[4096];
	char why_any[256]; /* the SLO key_any misses ("" when it meets them) */
} objective_winners;

void objective_winners_init(objective_winners *w);
/* Offers measurement m of the variant called key. Returns 1 when m is ok
 * and meets every SLO, else 0 with the first missed SLO in why (n bytes;
 * why may be NULL). */
int objective_winners_offer(objective_winners *w, const muh_objective *o, const char *key,
			    const muh_measurement *m, char *why, size_t n);

/* "s" for latencies and times, "tok/s", "req/s", "" for counts. */
const char *objective_metric_unit(const char *name);

/* Writes value of metric name for a person into buf (n bytes): a time or
 * a latency (unit s) by text_time, to 4 significant digits ("210.3 ms",
 * "1.100 ms", "353.2 us"); a rate with one decimal and its unit
 * ("812.5 tok/s"); a count by %.6g; "-" when not finite. */
void objective_format(const char *name, double value, char *buf, size_t n);

/* The objective as one line: "maximize output_tokens_per_s subject to
 * ttft_p99 <= 2s, errors == 0". */
void objective_describe(const muh_objective *o, char *buf, size_t n);

MUH_END_DECLS

#endif
