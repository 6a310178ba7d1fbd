/*
 * kb.h — prior knowledge: CUB's tuning policies, read from the CCCL headers
 * installed with the CUDA toolkit (cub/device/dispatch/tuning/tuning_*.cuh),
 * and turned into seed configurations for specs that declare a mapping.
 *
 * What is read, per policy: the algorithm (the file's stem: reduce, scan,
 * radix_sort ...), the SM architecture it is for (ChainedPolicy<600, ...> or
 * a struct named smNN_tuning, possibly deriving from a template such as
 * sm90_tuning_vals<T, 192, 22> whose arguments are substituted), the agent
 * policy it instantiates (ReducePolicy
 * = AgentReducePolicy<...>), threads per block, items per thread, the vector
 * load length, and the block load/store algorithm, cache load modifier and
 * block reduce/scan algorithm enums. Values written as plain numbers, enum
 * names, or static constexpr members of the same struct are resolved;
 * anything computed (Tuning::threads, Nominal4BItemsToItems<T>(16)) is
 * unknown (-1, "").
 *
 * The parser is lexical (comments and preprocessor lines dropped, then
 * tokens and braces), so it reads every CCCL version that keeps this shape
 * and never needs a C++ compiler. It never prints and never exits.
 */
#ifndef MUH_KB_H
#define MUH_KB_H

#include <stddef.h>

#include "muh/diag.h"
#include "muh/spec.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

#define KB_NAME 48
#define KB_TEXT 200

typedef struct kb_policy {
	char algorithm[KB_NAME];       /* file stem without tuning_: "reduce" */
	char policy[KB_NAME];          /* the struct: "Policy600", "sm100_tuning" */
	char variant[KB_TEXT];         /* a specialization's template args ("" for a hub policy) */
	char agent[KB_NAME];           /* the using name ("ReducePolicy"), "" for a tuning struct */
	int cc;                        /* SM architecture as major*10+minor (60, 90, 100); 0 unknown */
	int threads;                   /* threads per block; -1 unknown */
	int items_per_thread;          /* -1 unknown */
	int vector_load_length;        /* items per vector load; -1 unknown or not a knob of the agent */
	char load_algorithm[KB_NAME];  /* BLOCK_LOAD_* */
	char store_algorithm[KB_NAME]; /* BLOCK_STORE_* */
	char load_modifier[KB_NAME];   /* LOAD_* (CacheLoadModifier) */
	char block_algorithm[KB_NAME]; /* BLOCK_REDUCE_*, BLOCK_SCAN_*, BLOCK_HISTO_*, RADIX_RANK_* */
	char file[KB_TEXT];            /* header it came from (file name only) */
	int line;                      /* line of the agent instantiation or the struct */
} kb_policy;

typedef struct kb_cccl {
	kb_policy *v;
	size_t n, cap;
	char dir[1024]; /* the tuning directory read ("" when a single file) */
	int nfiles;     /* headers read */
} kb_cccl;

/* Finds the directory cub/device/dispatch/tuning under hint (a tuning dir,
 * a cub dir, an include dir, or a toolkit root) or, when hint is NULL, under
 * $CUDA_HOME, $CUDA_PATH, /usr/local/cuda and /usr/include, each directly and
 * under include/cccl. Writes it to dir. Returns MUH_OK, or MUH_EENV with d
 * saying where it looked. */
int kb_cccl_find(const char *hint, char *dir, size_t n, muh_diag *d);

/* Reads every tuning_*.cuh of path (a directory found as by kb_cccl_find, or
 * one header file) into *kb, which must be zeroed. Returns MUH_OK (kb->n may
 * be 0 only when no header has a policy), MUH_EENV (nothing found or
 * unreadable), MUH_ENOMEM. */
int kb_cccl_read(const char *path, kb_cccl *kb, muh_diag *d);

/* Parses one header's text (len bytes) as algorithm `algorithm`, file name
 * `file` (for the records), appending to *kb. Returns MUH_OK or MUH_ENOMEM. */
int kb_cccl_parse(const char *text, size_t len, const char *algorithm, const char *file, kb_cccl *kb);

void kb_cccl_free(kb_cccl *kb);

/* The policy CUB's ChainedPolicy dispatch runs on architecture cc for this
 * algorithm and agent (agent NULL: any): the hub policy (no variant) with the
 * greatest cc <= the target whose threads are known. NULL if none. */
const kb_policy *kb_cccl_select(const kb_cccl *kb, const char *algorithm, const char *agent, int cc);

/* Whether p applies on architecture cc: the selected hub policy of its
 * agent, or a specialization (smNN_tuning) with the greatest NN <= cc among
 * the algorithm's specializations. */
int kb_cccl_applies(const kb_cccl *kb, const kb_policy *p, int cc);

/* A seed derived from one policy through a spec's mapping. */
typedef struct kb_seed {
	const kb_policy *from;
	size_t *idx;    /* value index per spec param; SIZE_MAX where not mapped and no default */
	int ok;         /* 0: cannot be a seed (why says so) */
	int applies;    /* the policy applies to the target architecture */
	char why[200];  /* ok == 0: why not; ok == 1: "default P, Q" for params the policy left unset */
} kb_seed;

/* Turns the policies of the spec's `kb.cccl` algorithm into seeds through
 * its `kb.map` (docs/kb.md): each mapped param takes the policy's field
 * (threads, items_per_thread, vector_load_length, load_modifier, ...;
 * enum fields through a `values:` table), unmapped params their default.
 * Seeds of policies that apply on architecture cc come first; duplicates
 * are dropped (the first kept). Returns MUH_OK, MUH_EINPUT (no or bad
 * mapping; d at its place in the spec), MUH_ENOMEM. */
int kb_cccl_seeds(const kb_cccl *kb, const muh_spec *s, int cc, kb_seed **out, size_t *nout, muh_diag *d);

void kb_seeds_free(kb_seed *v, size_t n);

/* ---- muh kb cccl's output (kb_text.c), on a textout's result stream ---- */

/* The policies of kb (only algorithm alg, only those CUB dispatches on
 * cc; NULL, 0: all) as a table with a closing count, or as one JSON
 * object {dir, files, cc, policies}. Returns how many were shown. */
size_t kb_text_list(const textout *out, const kb_cccl *kb, const char *alg, int cc, int json);
/* The seeds v[0..n) of spec s (read from spec_path) for cc as a `seeds:`
 * block to paste, the policies that do not map as comments, or as one
 * JSON object {spec, algorithm, cc, seeds}. Returns how many map. */
size_t kb_text_seeds(const textout *out, const kb_cccl *kb, const muh_spec *s, const char *spec_path, int cc,
		     const kb_seed *v, size_t n, int json);

MUH_END_DECLS

#endif
