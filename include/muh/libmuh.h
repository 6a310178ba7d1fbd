/*
 * libmuh.h — the public API of libmuh: everything a program that links the
 * shared library (an inference engine tuning its own kernel online, the
 * Python binding python/muh.py, examples/) may call.
 *
 * Conventions, the same for every function here:
 *   - every name is muh_ or MUH_; nothing else leaves libmuh.so (a linker
 *     version script, src/libmuh.map, exports muh_* only);
 *   - objects are opaque handles, made and freed in pairs
 *     (muh_spec_open/muh_spec_close, muh_space_build/muh_space_free,
 *     muh_session_open/muh_session_close, muh_store_open/muh_store_close);
 *     a free function takes NULL and does nothing;
 *   - a call that can fail returns a muh_status; on anything but MUH_OK,
 *     muh_last_error() says why (with file:line:col when it is something
 *     the user wrote), and every out-parameter it names is left as
 *     documented (a handle out-parameter is NULL);
 *   - a configuration is an array of value indices, one per param, in the
 *     spec's order (uint32_t cfg[muh_space_nparams(sp)]); one holding an
 *     index past its param's values is MUH_EINPUT wherever it is read;
 *   - the library never prints and never exits.
 * A handle is used by one thread at a time; different handles may be used
 * from different threads. docs/session.md describes the session.
 */
#ifndef MUH_LIBMUH_H
#define MUH_LIBMUH_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define MUH_API __attribute__((visibility("default")))
#else
#define MUH_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The status of every call that can fail. The muh CLI exits with the same
 * numbers (MUH_ENOMEM as 3). */
typedef enum muh_status {
	MUH_OK = 0,
	MUH_EFINDING = 1, /* ran fine, but found a shortfall (nothing ok to name) */
	MUH_EINPUT = 2,   /* the caller's or the user's input is wrong */
	MUH_EENV = 3,     /* the environment failed: a file, a device, a library, I/O */
	MUH_ENOMEM = 4,   /* an allocation failed; nothing was half done */
} muh_status;

typedef struct muh_spec muh_spec;       /* a parsed spec file (docs/spec.md) */
typedef struct muh_space muh_space;     /* the valid configurations of a spec */
typedef struct muh_session muh_session; /* one tuning task, asked and told */
typedef struct muh_store muh_store;     /* a store of runs, opened read-only */

/* The message of the last call of this thread that returned a status other
 * than MUH_OK: never NULL, "" before any failure. Valid until the next
 * failing call of the same thread. */
MUH_API const char *muh_last_error(void);
/* The library's version, "MAJOR.MINOR.PATCH". */
MUH_API const char *muh_version(void);

/* --- spec ---------------------------------------------------------------- */

/* Reads and checks the spec at path into *out (muh_spec_close). MUH_EINPUT
 * when its content is wrong, MUH_EENV when it cannot be read. */
MUH_API muh_status muh_spec_open(const char *path, muh_spec **out);
MUH_API void muh_spec_close(muh_spec *spec);
/* The spec's name (its target name, else the file's stem). */
MUH_API const char *muh_spec_name(const muh_spec *spec);
/* How many problem instances the spec's problem: sizes make (1 without any). */
MUH_API size_t muh_spec_ninstances(const muh_spec *spec);

/* --- space --------------------------------------------------------------- */

/* Builds the space of spec for problem instance `instance` (below
 * muh_spec_ninstances) into *out (muh_space_free), exactly: every valid
 * configuration counted, each rejected one charged to one constraint, so
 * that valid + the sum of rejected == cartesian. hw names the hardware
 * profile the constraints' hw.* read (a built-in name or a YAML file);
 * NULL: the spec's own hw:, or none. The space keeps a reference to spec:
 * close the spec after the space. MUH_EINPUT for a bad instance, profile or
 * constraint. */
MUH_API muh_status muh_space_build(const muh_spec *spec, const char *hw, size_t instance, muh_space **out);
MUH_API void muh_space_free(muh_space *sp);
MUH_API size_t muh_space_nparams(const muh_space *sp);
/* The name of param p (p < nparams), or NULL. */
MUH_API const char *muh_space_param_name(const muh_space *sp, size_t p);
/* The index of the param called name, or -1 when there is none. */
MUH_API long muh_space_param_index(const muh_space *sp, const char *name);
/* The product of every param's value count (a double: it may pass 2^64). */
MUH_API double muh_space_cartesian(const muh_space *sp);
/* How many configurations satisfy every constraint. */
MUH_API uint64_t muh_space_valid(const muh_space *sp);
MUH_API size_t muh_space_nconstraints(const muh_space *sp);
/* Constraint c's expression as written (c < nconstraints), or NULL. */
MUH_API const char *muh_space_constraint(const muh_space *sp, size_t c);
/* How many configurations constraint c rejected (0 for c out of range). */
MUH_API double muh_space_rejected(const muh_space *sp, size_t c);
/* The i-th valid configuration (i < muh_space_valid) into cfg. */
MUH_API muh_status muh_space_config(const muh_space *sp, uint64_t i, uint32_t *cfg);
/* The spec's defaults into cfg; MUH_EFINDING (cfg still written) when they
 * break a constraint. */
MUH_API muh_status muh_space_default(const muh_space *sp, uint32_t *cfg);
/* cfg's canonical key, "A=1,B=64" in spec order, into buf (n bytes);
 * MUH_EINPUT when it does not fit (buf then holds "" when n > 0). */
MUH_API muh_status muh_space_key(const muh_space *sp, const uint32_t *cfg, char *buf, size_t n);
/* A canonical key back into cfg; MUH_EINPUT for an unknown name or value. */
MUH_API muh_status muh_space_parse_key(const muh_space *sp, const char *key, uint32_t *cfg);
/* The value of param p in cfg as an integer; MUH_EINPUT when p is out of
 * range or the value is not an integer. */
MUH_API muh_status muh_space_value_int(const muh_space *sp, const uint32_t *cfg, size_t p, long long *out);

/* --- session: ask and tell ----------------------------------------------- */

/* What muh_session_open reads besides the spec. Start from
 * MUH_SESSION_OPTIONS_INIT (zero is the default of every other field). */
typedef struct muh_session_options {
	unsigned version;     /* MUH_SESSION_OPTIONS_VERSION */
	const char *hw;       /* hardware profile; NULL: the spec's hw: */
	size_t instance;      /* the problem instance */
	const char *db;       /* a store: a rerun of the same run resumes; NULL: none */
	int fresh;            /* forget the run's earlier measurements in db first */
	const char *strategy; /* a strategy's name; NULL: the library's choice */
	uint64_t budget;      /* configurations to propose; 0: the whole space */
	uint64_t seed;        /* the strategy is deterministic for a seed */
} muh_session_options;
#define MUH_SESSION_OPTIONS_VERSION 1
#define MUH_SESSION_OPTIONS_INIT {MUH_SESSION_OPTIONS_VERSION, NULL, 0, NULL, 0, NULL, 0, 0}

/* Opens a session on the spec at path, for a caller that measures itself:
 * the space of o->instance is built, the store's run begun or resumed.
 * o NULL: every default. MUH_EINPUT for a bad spec, option or a version
 * other than MUH_SESSION_OPTIONS_VERSION; MUH_EENV when the store cannot
 * be opened. */
MUH_API muh_status muh_session_open(const char *path, const muh_session_options *o, muh_session **out);
MUH_API void muh_session_close(muh_session *s);
/* The session's space (its params, keys, values); lives with the session. */
MUH_API const muh_space *muh_session_space(const muh_session *s);
/* The problem instance, "NAME=VALUE,..." in spec order ("" without any). */
MUH_API const char *muh_session_problem(const muh_session *s);
/* Proposes up to k configurations to measure, written one after the other
 * to cfgs (k * nparams indices); *n says how many. *n 0: nothing more to
 * propose now (tell the pending ones and ask again, or the search is
 * done). A configuration proposed and not yet told is never proposed
 * again. */
MUH_API muh_status muh_session_next(muh_session *s, uint32_t *cfgs, size_t k, size_t *n);
/* Answers cfg without measuring when the session can (told already, or
 * stored in the store's run, which is then told to the strategy): *answered
 * 1, else 0 and the caller measures it. */
MUH_API muh_status muh_session_lookup(muh_session *s, const uint32_t *cfg, int *answered);
/* Tells the session the caller's measurement of cfg: seconds (lower is
 * better), or failed != 0 (seconds ignored). Stored in the store's run
 * when the session has a store. MUH_EINPUT when cfg is not valid. */
MUH_API muh_status muh_session_record(muh_session *s, const uint32_t *cfg, double seconds, int failed);
/* The best configuration told so far into cfg (may be NULL) and its
 * seconds into *seconds (may be NULL); MUH_EFINDING when none was ok. */
MUH_API muh_status muh_session_best(const muh_session *s, uint32_t *cfg, double *seconds);
/* Configurations proposed and not yet told. */
MUH_API size_t muh_session_pending(const muh_session *s);
/* 1 when the budget is spent (every proposal told) or the space exhausted. */
MUH_API int muh_session_done(const muh_session *s);

/* --- store: what a run found --------------------------------------------- */

/* Opens the store at path read-only into *out (muh_store_close): the file
 * is never written. MUH_EINPUT when it is not a muh store (or missing),
 * MUH_EENV when muh cannot read it. */
MUH_API muh_status muh_store_open(const char *path, muh_store **out);
MUH_API void muh_store_close(muh_store *st);
/* The latest run of the spec called spec_name (NULL: any) for the problem
 * instance problem ("NAME=VALUE,..." as muh_session_problem writes it;
 * NULL: any) into *run; MUH_EINPUT when the store holds none. */
MUH_API muh_status muh_store_find_run(muh_store *st, const char *spec_name, const char *problem, int64_t *run);
/* The best of run, as `muh report` and `muh patch --from` name it: its key
 * into key (n bytes), its score (seconds, or the run's objective) into
 * *score and the run's measurements into *nmeasured (both may be NULL).
 * MUH_EFINDING when no variant was ok (within the SLOs), MUH_EINPUT when
 * there is no such run or the key does not fit in n. */
MUH_API muh_status muh_store_best(muh_store *st, int64_t run, char *key, size_t n, double *score,
				  size_t *nmeasured);

#ifdef __cplusplus
}
#endif

#endif
