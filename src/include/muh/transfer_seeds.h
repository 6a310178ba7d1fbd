/*
 * transfer_seeds.h — seeds for a search from earlier results: the store's
 * runs of the same spec at other problem instances, and imported result
 * files (T4 results JSON; a vLLM fused-MoE config JSON keyed by batch size).
 *
 * A tuner's best prior is its own earlier results: the best configurations
 * for neighbouring problem sizes tend to be good here too. The seeds are
 * evaluated right after the defaults and the spec's seeds (they count
 * against the budget like any evaluation; a repeat is never evaluated),
 * then the strategy goes on from what they found.
 *
 * Order: store runs nearest in problem values first (distance: the sum over
 * problem symbols of |log2 a - log2 b| for positive numbers, |a - b| for
 * others, 64 for a symbol missing or not equal as text), the latest run
 * first on ties; from each, its top k ok measurements under the objective.
 * Then each file in the order given: a T4 file's top k; a vLLM config's k
 * entries nearest to this instance's batch size (problem symbol M, or the
 * spec's only problem symbol with several values). A configuration that is
 * not valid here, or that is already a seed, is left out and counted.
 * Every seed carries a sentence saying where it came from.
 */
#ifndef MUH_TRANSFER_SEEDS_H
#define MUH_TRANSFER_SEEDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "muh/diag.h"
#include "muh/objective.h"
#include "muh/space.h"
#include "muh/store.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* Defaults: top k per source instance, at most this many instances. */
#define TRANSFER_K 4
#define TRANSFER_INSTANCES 3

typedef struct transfer_seeds {
	const muh_space *sp;
	size_t np;
	uint32_t *cfgs; /* n configurations, np value indices each */
	char **from;    /* n sentences: where each came from */
	size_t n, cap;
	size_t left_out; /* candidates not valid here, or repeats */
} transfer_seeds;

void transfer_seeds_init(transfer_seeds *ts, const muh_space *sp);
void transfer_seeds_free(transfer_seeds *ts);

/* Adds seeds from the runs in st (named store_name in the sentences) of sp's
 * spec (same spec text, or the same spec name) whose problem values differ
 * from instance's: at most max_instances runs, nearest first, top k of each
 * under objective o (NULL: minimize time). MUH_OK, MUH_ENOMEM, or the
 * store's error. */
int transfer_seeds_from_store(transfer_seeds *ts, muh_store *st, const char *store_name, size_t instance,
			      const muh_objective *o, size_t k, size_t max_instances, muh_diag *d);

/* Adds seeds from a result file: T4 results JSON (its k fastest correct
 * results) or a vLLM config JSON (its k batch sizes nearest to instance's).
 * MUH_EINPUT with d at path:line:col when the file is neither; MUH_EENV when
 * it cannot be read. */
int transfer_seeds_from_file(transfer_seeds *ts, const char *path, size_t instance, size_t k,
			     muh_diag *d);

/* What muh tune does: seeds from the store at store_path (NULL: none; a
 * missing or empty file has no runs: no seeds), unless from_store is 0,
 * then from each of files[0..nfiles), with TRANSFER_K and
 * TRANSFER_INSTANCES. Errors as above (a store that is not one: MUH_EENV). */
int transfer_seeds_gather(transfer_seeds *ts, const char *store_path, int from_store,
			  const char *const *files, size_t nfiles, size_t instance, const muh_objective *o,
			  muh_diag *d);

/* The batch size instance tunes for (*m): problem symbol M, else the
 * only symbol with several values. 1 when there is one, else 0. */
int transfer_seeds_batch_size(const muh_spec *s, size_t instance, double *m);
/* The index of the value of par that JSON v holds (a number, a bool as
 * 0/1, or a value's text); -1 when none. */
struct cJSON;
long transfer_seeds_match_value(const muh_param *par, const struct cJSON *v);
/* Writes the seeds to f's result stream, one line each ("transfer  T1
 * KEY  from ..."), or as JSON lines ({"event": "transfer_seed", ...}) when
 * json. */
void transfer_seeds_print(const transfer_seeds *ts, const textout *f, int json);

MUH_END_DECLS

#endif
