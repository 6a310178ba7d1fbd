/*
 * transfer.h — results measured on one device, read for another.
 *
 * The seeds' engineer cannot run muh's GPU backends on the card they port
 * to: they tune where they can and carry the results over. A transfer
 * report takes a store and a target hardware profile and says, for each
 * run's top k (its fastest ok variants, as measured), whether the config is
 * valid on the target and, when not, which limit it breaks, with the
 * numbers:
 *
 *   - the run's spec constraints, evaluated with the target's hw.* values
 *     (hw.smem_per_block_optin, hw.warp_size, ...): a constraint that fails
 *     makes the config invalid ("constraint 1 (spec.yaml:23): 40960 <=
 *     32768 is false"); one that reads a key the target does not know is
 *     not checked, and the entry says so;
 *   - what the compiled kernel used where it was measured (the Triton
 *     fingerprint's shared memory per kernel): more than the target's
 *     hw.smem_per_block_optin makes the config invalid;
 *   - threads per block: num_warps (a param, or the fingerprint's) times the
 *     target's hw.warp_size, against hw.max_threads_per_block; where the
 *     target does not know that limit, a note says what was not checked.
 *
 * The valid ones are ranked by their measured time. Every time in a report
 * was measured on the run's own device (its hardware profile), never on the
 * target; entries say so (other_device), and so must anything that prints
 * them. Nothing here measures or predicts a time.
 *
 * Reads the store read-only; never prints.
 */
#ifndef MUH_TRANSFER_H
#define MUH_TRANSFER_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/hw.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

enum transfer_verdict { TRANSFER_VALID = 0, TRANSFER_INVALID = 1 };

/* One config of a run's top k. */
typedef struct transfer_entry {
	char *key;         /* canonical key "A=1,B=2" */
	double time_s;     /* measured median, on the run's device */
	int source_rank;   /* 1 = fastest ok variant of the run, as measured */
	enum transfer_verdict verdict;
	int target_rank;   /* among the valid entries of the run, by time; 0 invalid */
	char **why;        /* verdict invalid: each limit broken, with the numbers */
	size_t nwhy;
	char **notes;      /* what could not be checked on the target, and why */
	size_t nnotes;
	long long shared;  /* largest shared memory of its kernels as compiled where
			      measured (fingerprint), bytes; -1 when not recorded */
} transfer_entry;

/* One run of the store. */
typedef struct transfer_run {
	int64_t id;
	char *spec_path, *spec_name, *problem;
	char *measured_on;  /* the run's hardware profile name ("h200", "NVIDIA H200") */
	int other_device;   /* 1 unless measured_on names the target's device */
	size_t nok;         /* ok measurements in the run */
	char *spec_note;    /* why the spec's constraints were not checked; NULL when they were */
	transfer_entry *e;  /* its top k, fastest first */
	size_t n;
	size_t nvalid;
} transfer_run;

typedef struct transfer_report {
	muh_hw target;
	transfer_run *runs;
	size_t nruns;
} transfer_report;

/* Reads the store at db (read-only) and builds the report for target: per
 * run (or only run `only`, when nonzero), its topk fastest ok variants
 * (topk 0: all), checked as above. MUH_EINPUT when db holds no run (or no
 * run `only`), MUH_EENV when it is no store; d says which. *out is freed
 * with transfer_free. */
int transfer_build(const char *db, const muh_hw *target, size_t topk, int64_t only,
		   transfer_report **out, muh_diag *d);

void transfer_free(transfer_report *r);

/* The report as JSON text (malloc'd; NULL when out of memory):
 * {target, target_device, runs: [{run, spec, problem, measured_on,
 * other_device, ok, checked, valid, entries: [{key, time_s, source_rank,
 * verdict, target_rank, why, notes, shared_bytes, measured_on}]}]}. */
char *transfer_to_json(const transfer_report *r);

/* The same for a person (db: the store's path, as named), on o's result
 * stream: the target, then per run its top configs with their verdict and
 * why, and the checks the target could not answer. */
void transfer_text(const textout *o, const char *db, const transfer_report *r);

MUH_END_DECLS

#endif
