/*
 * score.h — the search score of Willemsen et al. (2024), for a run replayed
 * over a fully measured space.
 *
 * For the n valid times of a space (the configurations measured ok), a
 * budget B and one run whose best time after k evaluations is best(k):
 *
 *     E_rand(k) = the expected best of k distinct uniform draws from the n
 *                 valid times (exact, not sampled)
 *     score(B)  = mean over k = 1..B of (best(k) - E_rand(k)) / (opt - E_rand(k))
 *
 * 0 is uniform random search, 1 finds the optimum at once, and a run can
 * score below 0. Before the first valid result best(k) is the worst valid
 * time. Terms where E_rand(k) equals the optimum carry no information and
 * are left out of the mean. bench/search_score.py computes the same.
 */
#ifndef MUH_SCORE_H
#define MUH_SCORE_H

#include <stddef.h>

#include "muh/muh.h"
#include "muh/strategy.h"

MUH_BEGIN_DECLS

/* E_rand(k) for k = 1..kmax into er[0..kmax-1], from the n valid times t
 * sorted ascending (n >= 1). For k > n, E_rand(k) is the optimum. */
void score_expected_random(const double *t, size_t n, size_t kmax, double *er);

/* score(B) of one run: trace[0..ntrace-1] are its evaluations' times in
 * order (INFINITY or NAN for a failed one); er from score_expected_random
 * with kmax >= B; opt and worst the valid times' least and greatest.
 * Evaluations past ntrace hold the best so far. NAN when no term counts
 * (B == 0, or every E_rand(k) is the optimum). */
double score_run(const double *trace, size_t ntrace, const double *er, double opt, double worst,
                 size_t budget);

/* The scores of one run (r) over a fully measured space whose n valid
 * times are t, sorted ascending: *all over every evaluation in order, with
 * B = the evaluations made; *own over the search's own proposals only, the
 * defaults, the baseline, the spec's seeds and transfer seeds left out (B
 * = the proposals left): the score without the head start. Predicted
 * failures (never measured) are not evaluations. NAN where no term counts.
 * Returns MUH_OK or MUH_ENOMEM. */
int score_result(const double *t, size_t n, const strategy_result *r, double *all, double *own);

MUH_END_DECLS

#endif
