/*
 * baseline.h — what already ships: the entry of an engine's own tuned
 * config file that the engine picks for a problem, as the baseline a
 * tune must beat.
 *
 * A tuner that only reports its speedup over the kernel's defaults can
 * write a file slower than the one the engine ships (muh's H200 MoE file
 * was 4% slower than vLLM's at M=2048, and nothing said so). So when the
 * engine ships a config file for this device and shape, its entry for the
 * problem is measured in the same run as one more candidate (right after
 * the defaults, seeds or no seeds), and the decision stage (decide.h)
 * judges every finalist against it: a size of the output is either proven
 * faster than what ships, or keeps what ships.
 *
 * The file is vLLM's fused-MoE format: a JSON object whose members are
 * named by batch sizes ("1", "16", ...), each an object of param values.
 * The entry picked is the engine's own rule (vLLM's
 * try_get_optimal_moe_config): the member named by this instance's batch
 * size (problem symbol M, else the only symbol with several values), else
 * the one nearest to it by absolute difference, the first in the file on
 * a tie.
 *
 * Where the file comes from: --baseline FILE, else the spec's
 * target.baseline, a path relative to the spec with {device} (the hardware
 * profile's device name as the engine writes it in file names: spaces as
 * '_', "NVIDIA_H200") and {NAME} for any problem symbol filled in. A
 * template whose file does not exist means the engine ships none for this
 * device: the defaults are the baseline. Never prints, never exits.
 */
#ifndef MUH_BASELINE_H
#define MUH_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/hw.h"
#include "muh/space.h"
#include "muh/spec.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct baseline_pick {
	char path[4096];  /* the file */
	double file_key;  /* the batch size of the entry taken */
	int exact;        /* 1: the file's entry for this instance's own batch size */
	int valid;        /* 0: the entry breaks a constraint of this space (why says which) */
	int is_defaults;  /* 1: the entry is the instance's defaults (set by the session) */
	char key[4096];   /* its canonical variant key */
	char from[1024];  /* a sentence: which file, which entry */
	char why[512];    /* valid 0: why */
} baseline_pick;

/* The baseline file of instance: explicit_path when not NULL (it must
 * exist: MUH_EINPUT naming it otherwise), else the spec's target.baseline
 * with {device} and problem symbols filled in, relative to the spec's
 * folder (an unknown {NAME}: MUH_EINPUT at the spec's line). MUH_OK with
 * *found 1 and out set, or *found 0 when there is none (no template, or its
 * file does not exist). */
int baseline_path(const muh_spec *sp, size_t instance, const muh_hw *hw, const char *explicit_path,
			  char *out, size_t n, int *found, muh_diag *d);

/* The entry of the config file at path that the engine picks for sp's
 * instance, as cfg (space_nparams values; params the entry omits take the
 * instance's defaults) and *out. MUH_EINPUT with d at path:line:col when
 * the file is not such a config, an entry names something that is not a
 * param of the spec, or a value that is not one of the param's values;
 * MUH_EENV when it cannot be read. An entry that breaks a constraint is
 * MUH_OK with out->valid 0. */
int baseline_entry(const muh_space *sp, const char *path, uint32_t *cfg, baseline_pick *out, muh_diag *d);

MUH_END_DECLS

#endif
