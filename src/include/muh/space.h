/*
 * space.h — the space of a spec: its valid configurations, exactly.
 *
 * A configuration is an array of value indices, one per param, in spec
 * order (uint32_t cfg[nparams]). The engine:
 *   - compiles each constraint once;
 *   - splits params into groups that no constraint links (connected
 *     components of the "appear in one constraint" graph); a group's valid
 *     count multiplies, it is never enumerated against the others;
 *   - inside a group binds params in an order that lets each constraint be
 *     checked as soon as its last param is bound, and prunes the subtree;
 *   - stores each constrained group's valid tuples, so index <-> config is a
 *     mixed-radix computation over groups: O(nparams) per call.
 *
 * Rejection attribution (documented in docs/space.md): a configuration that
 * fails is charged to the first failing constraint in check order, i.e. the
 * order in which constraints become checkable while binding, ties broken by
 * spec order. A constraint that errors (division by zero) rejects too.
 * valid + sum(rejected) == cartesian, always.
 */
#ifndef MUH_SPACE_H
#define MUH_SPACE_H

#include <stddef.h>
#include <stdint.h>

#include "muh/diag.h"
#include "muh/hw.h"
#include "muh/spec.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct muh_space muh_space;

enum space_neigh { SPACE_HAMMING = 0, SPACE_ADJACENT = 1 };

/* Builds the space of spec s for problem instance `instance`, with hw
 * (may be NULL: then a constraint reading hw.* is an input error). */
int space_build(const muh_spec *s, const muh_hw *hw, size_t instance, muh_space **out, muh_diag *d);
void space_free(muh_space *sp);

/* Progress of a long space_build: fn (NULL: none) is called about every
 * million steps of the walk with the fraction of the cartesian space walked
 * so far (0..1, across groups) and the seconds since the build started;
 * returning nonzero stops the build, which then returns MUH_EFINDING with
 * d->msg "interrupted ...". Process-wide (the CLI sets it for Ctrl-C and a
 * progress line); builds in other threads see the same callback. */
typedef int (*space_progress_fn)(void *ctx, double fraction, double seconds);
void space_set_progress(space_progress_fn fn, void *ctx);

const muh_spec *space_spec(const muh_space *sp);
size_t space_instance(const muh_space *sp); /* the problem instance it was built for */
size_t space_nparams(const muh_space *sp);
double space_cartesian(const muh_space *sp);     /* may exceed 2^64 */
uint64_t space_valid(const muh_space *sp);       /* exact */
double space_seconds(const muh_space *sp);       /* time space_build took */
size_t space_nconstraints(const muh_space *sp);
double space_rejected(const muh_space *sp, size_t c); /* by spec index */
size_t space_check_order(const muh_space *sp, size_t k); /* k-th checked constraint's spec index */
size_t space_ngroups(const muh_space *sp);

/* The i-th valid configuration, 0 <= i < space_valid(). */
int space_config_at(const muh_space *sp, uint64_t i, uint32_t *cfg);
/* The index of a valid configuration; -1 (and *i untouched) when invalid. */
int space_index_of(const muh_space *sp, const uint32_t *cfg, uint64_t *i);
/* 1 when every constraint holds for cfg, else 0. */
int space_is_valid(const muh_space *sp, const uint32_t *cfg);
/* A uniform random valid configuration; *rng is xorshift state (nonzero). */
int space_sample(const muh_space *sp, uint64_t *rng, uint32_t *cfg);
/* The valid neighbours of cfg: SPACE_HAMMING changes one param to any other
 * value, SPACE_ADJACENT moves one param to the previous or next value.
 * Writes at most max configs (nparams each) into out; returns the count. */
size_t space_neighbours(const muh_space *sp, const uint32_t *cfg, enum space_neigh kind,
			uint32_t *out, size_t max);
/* The defaults as a configuration (params without a default take their
 * first value). Returns 1 when it is valid, 0 when not. */
int space_default(const muh_space *sp, uint32_t *cfg);
/* Canonical key "A=1,B=64" (params in spec order). Returns length. */
int space_key(const muh_space *sp, const uint32_t *cfg, char *buf, size_t n);
/* The value of NAME in a canonical key "A=1,B=2" (as space_key writes it),
 * copied to buf (n bytes). 0 when found, -1 when the key has no NAME. */
int space_key_value(const char *key, const char *name, char *buf, size_t n);
/* Parses a canonical key back. MUH_EINPUT when a name or value is unknown. */
int space_parse_key(const muh_space *sp, const char *key, uint32_t *cfg, muh_diag *d);
/* The value of param p in cfg. */
muh_value space_value(const muh_space *sp, const uint32_t *cfg, size_t p);

/* A xorshift64* step, shared by everything that needs reproducible random
 * numbers. */
uint64_t space_rand(uint64_t *state);

/* ---- muh space's output (space_text.c), on a textout's result stream ---- */

/* Space sp of spec s (profile hw, NULL: none; problem instance inst) for a
 * person: spec, profile, problem, params, cartesian, valid, time, then each
 * constraint's rejections in spec order; with prune_only, the size before
 * and after each constraint in check order instead. */
void space_text(const textout *o, const muh_spec *s, const muh_hw *hw, const muh_space *sp, size_t inst,
		int prune_only);
/* The same as one JSON object {spec, format, profile, problem_instance,
 * params, groups, cartesian, valid, seconds, constraints, check_order}. */
void space_text_json(const textout *o, const muh_spec *s, const muh_hw *hw, const muh_space *sp, size_t inst);
/* Every valid configuration's key, one a line, in index order. MUH_OK;
 * MUH_EENV when the space is too large to list (nothing more written),
 * MUH_ENOMEM. */
int space_text_list(const textout *o, const muh_space *sp);

MUH_END_DECLS

#endif
