/*
 * writeback.h — write-back from a store: what `muh patch --from DB` and the
 * emitters (`muh patch --emit`) decide before anything is printed.
 *
 * A store's runs, each ranked by best.h, become one of three things:
 *   - knob values (--set ID[ALT]=VALUE) for runs whose spec maps its params
 *     to knobs (a `knobs:` section, as `muh scan --specs` writes it);
 *   - a deployment file's new text for engine runs (backend engine): the
 *     decision stage's proven winner, made by the code that made the
 *     measured variant (engine_launch_text);
 *   - a config file the engine reads (moe-json, a C header, a
 *     triton.Config list), or a triton.Config list written into the
 *     engine's own autotune list.
 * Then writeback_tree turns the values and files into one patch plan on an
 * engine tree: its diff, or with apply the files written, all or nothing.
 *
 * A run whose decision proved no gain is never written unless the caller
 * forces it, and then it is marked UNPROVEN (best_decided is the one answer
 * to "may this be written back").
 *
 * Nothing here prints or exits: lines for a person go to the caller's
 * observer (a note, without any "muh patch: " a CLI puts first; a file
 * written, with what a person is told about it); errors come back as a
 * status with the diagnostic in a muh_diag.
 */
#ifndef MUH_WRITEBACK_H
#define MUH_WRITEBACK_H

#include <stddef.h>
#include <stdint.h>

#include "muh/best.h"
#include "muh/diag.h"
#include "muh/muh.h"
#include "muh/patch.h"
#include "muh/scan.h"
#include "muh/store.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

#define WRITEBACK_MAX_SETS 256

/* One knob value to write: ID=VALUE, or ID[ALT]=VALUE for one alternative
 * of a conditional knob (alt -1: the whole value). value is not owned. */
typedef struct writeback_set {
	char id[32];
	int alt;
	const char *value;
} writeback_set;

/* Parses "ID=VALUE" or "ID[ALT]=VALUE" into *s (s->value points into arg).
 * 0, or -1 when arg is neither or VALUE is empty. */
int writeback_parse_set(const char *arg, writeback_set *s);

/* One run of a store, ranked by best.h: best.ranked[0] is the best (at
 * sustained clocks when the run was re-timed and a re-timed variant
 * passed), the others behind it. Every string is owned by the run. */
typedef struct writeback_run {
	int64_t run, instance;
	char *spec_path, *problem, *hw, *backend;
	char *spec_text, *spec_abs; /* as the store kept them (NULL: an older store) */
	muh_best best;
} writeback_run;

/* The runs of a store (all, or the one of `only`), in the store's order. */
typedef struct writeback_runs {
	int64_t only; /* 0: all */
	writeback_run *r;
	size_t n, cap;
} writeback_runs;

/* Reads every run (only: just that one; 0: all) of the store at db, each
 * ranked, into *sr (writeback_runs_free, also after an error). An error
 * when db is no store, or holds no such run. */
int writeback_runs_read(const char *db, int64_t only, writeback_runs *sr, muh_diag *d);
void writeback_runs_free(writeback_runs *sr);

/* The key of run b's i-th best (0: the best; i < b->best.nranked). */
const char *writeback_run_key(const writeback_run *b, size_t i);

/* What a write-back tells its caller as it goes. note: one line for a
 * person (no newline), such as "run 3: no proven gain: ...", "note: ..."
 * or "warning: ..."; written: a file an emitter wrote (or, with no path,
 * the text it made for the caller to show). Either may be NULL. */
struct writeback_file;
typedef struct writeback_observer {
	void (*note)(void *ctx, const char *line);
	void (*written)(void *ctx, const struct writeback_file *f);
	void *ctx;
} writeback_observer;

/* The values that knob-mapped runs of sr write (--from DB with a tree):
 * sets[0..*nsets) (their values kept in vals), each run's best, i.e. its
 * decision's proven winner. A run whose decision proved no gain adds
 * nothing and counts in *unproven, unless force, which takes its search's
 * own best (both said through ob). Engine runs are left out (see
 * writeback_engine_winners). An error when runs disagree on a knob, or no
 * run maps a knob and none was unproven. */
int writeback_sets_from_store(const writeback_runs *sr, writeback_set *sets, int *nsets, char vals[][128],
				      int force, int *unproven, const writeback_observer *ob, muh_diag *d);

/* One engine run's winner: its deployment file (relative to the tree)
 * and the file's new text. */
typedef struct writeback_engine_win {
	int64_t run;
	char rel[4096];
	char *text;
	size_t len;
	char key[4096];
	char value[64]; /* the objective's value, for the note: the decision stage's median
			 * when it measured the key, else the search's measurement */
	double gain;    /* the defaults' score over the winner's (>1: better); NAN when unknown */
	double noise;   /* the run's noise; NAN when not measured */
	int unproven;   /* written with force although its decision proved no gain */
	char why[1100]; /* then: the decision's word */
	char forced[1200]; /* then: what the decision stage measured of what is written
			    * (writeback.c's forced_gain_text); "" when it had no row */
} writeback_engine_win;

/* The engine runs of a store, their winners made into deployment files. */
typedef struct writeback_engine_wins {
	writeback_engine_win w[WRITEBACK_MAX_SETS];
	int n;
	int unproven; /* runs whose decision proved no gain (not written) */
	int skipped;  /* runs where no variant met the SLOs (nothing to write) */
} writeback_engine_wins;

/* Fills *E (zeroed first; writeback_engine_wins_free) with the winner of
 * every engine run of the store at db (only: just that one): the decision
 * stage's proven winner written into the run's deployment file, which must
 * lie inside tree (a run whose spec folder is gone reads the file of the
 * same name from tree). Without a proven gain a run counts in E->unproven,
 * unless force (then written, marked unproven); without a variant that met
 * the SLOs it counts in E->skipped; each said through ob. Two runs that
 * tune one file are an error. */
int writeback_engine_winners(const char *db, const char *tree, int64_t only, int force,
				     writeback_engine_wins *E, const writeback_observer *ob, muh_diag *d);
void writeback_engine_wins_free(writeback_engine_wins *E);

/* --from DB with a tree: reads the store's runs, the winners of its engine
 * runs into *E (writeback_engine_winners) and the knob values of its
 * knob-mapped runs into sets (writeback_sets_from_store). When engine runs
 * were found, knob-mapped runs beside them are written too when there are
 * any; their error counts only then. */
int writeback_from_store(const char *db, const char *tree, int64_t only, int force, writeback_engine_wins *E,
				 writeback_set *sets, int *nsets, char vals[][128], const writeback_observer *ob,
				 muh_diag *d);

/* What an emitter is asked for (the --emit options). */
typedef struct writeback_emit_opts {
	const char *db, *out, *device, *dtype, *into, *scan, *knob, *hw;
	int topk, force, extend;
	const muh_knob *const *knobs; /* the scan of into/scan, for "does the engine read it" */
	size_t nknobs;
} writeback_emit_opts;

enum writeback_kind { WRITEBACK_MOE_JSON, WRITEBACK_HEADER, WRITEBACK_TRITON_CONFIGS };

/* One batch size of a moe-json file: what its entry holds and why. */
typedef struct writeback_moe_size {
	long long batch;          /* M */
	const writeback_run *run; /* the run written for it */
	const char *kept;         /* the key of what ships, written because the run had no
				     decision stage (best_shipped); NULL otherwise */
} writeback_moe_size;

/* A file an emitter wrote, for the observer. */
typedef struct writeback_file {
	enum writeback_kind kind;
	const char *path;            /* the file written; NULL: no --out, text is for the caller */
	const char *text;            /* with path NULL: the content */
	const char *provenance;      /* where the numbers came from (moe-json, header) */
	const char *provenance_path; /* moe-json written with force: the side file; else NULL */
	int has_reads;               /* 1: reads says whether the engine reads the file */
	const char *reads;           /* patch_engine_reads' words; NULL: unknown (no scan) */
	const writeback_moe_size *sizes; /* moe-json: one per batch size */
	size_t nsizes;
} writeback_file;

/* Writes the config files of emitter `kind` ("moe-json", "header",
 * "triton-configs") from the runs of sr, as eo asks; each file written is
 * given to ob->written. moe-json and header refuse a device or dtype that
 * no measurement in the store was taken on, unless eo->force (then marked
 * as measured elsewhere). header writes a run's best only where its
 * decision proved it (best_proof), or what its decision kept; another run
 * is said and left out, unless eo->force (then its best measured
 * finalist, marked). MUH_EFINDING (d set, nothing written) when no run
 * was proven; an unknown kind is MUH_EINPUT. */
int writeback_emit(const char *kind, const writeback_runs *sr, const writeback_emit_opts *eo,
			   const writeback_observer *ob, muh_diag *d);

/* The knobs of eo->into (scanned now) or eo->scan (a saved scan), as one
 * array *arr of *n (free(*arr)); *surf or *saved holds them (scan_free,
 * patch_knobs_free). */
int writeback_emit_knobs(const writeback_emit_opts *eo, muh_surface **surf, patch_knobs **saved,
				 const muh_knob ***arr, size_t *n, muh_diag *d);

/* The knob that ref names among saved (or else surf): its id, or else its
 * name when exactly one knob has it. NULL with d saying why (where: the
 * scan file or tree the knobs came from; tree: for the hint). */
const muh_knob *writeback_find_knob(const patch_knobs *saved, const muh_surface *surf, const char *ref,
					    const char *where, const char *tree, muh_diag *d);

/* --emit triton-configs --into TREE --knob ID: the knob's autotune list
 * with the first ranked run's top eo->topk (valid on eo->hw, when given)
 * written into it, as one set (*value malloc'd, set->value points at it)
 * for writeback_tree. */
int writeback_autotune_into(const writeback_runs *sr, const writeback_emit_opts *eo, muh_surface *surf,
				    patch_knobs *saved, writeback_set *set, char **value, const writeback_observer *ob,
				    muh_diag *d);

/* What to write into an engine tree, and how. */
typedef struct writeback_tree_opts {
	const char *tree;
	const char *scanfile; /* knobs from a saved scan; NULL: surf/saved, else scanned now */
	const char *backup;   /* apply's backup folder; NULL: tree/.muh-backup/<date-time> */
	const char *out;      /* write the diff here (not with apply); NULL: not */
	int apply, follow, force;
	const writeback_set *sets;
	int nsets;
	const writeback_engine_wins *wins; /* may be NULL */
	muh_surface *surf;    /* already scanned (--into), or NULL */
	patch_knobs *saved;   /* already loaded, or NULL */
	/* called after each engine winner's file is planned (for a note) */
	void (*on_win)(void *ctx, const writeback_engine_win *w);
	void *ctx;
} writeback_tree_opts;

/* What writeback_tree did. diff is malloc'd (free). */
typedef struct writeback_tree_result {
	char *diff;            /* the unified diff, the UNPROVEN preamble first when there is one */
	size_t nchanged;       /* files the plan changes */
	int written;           /* files apply wrote */
	char backup[4096];     /* where apply put the originals ("" none) */
	char unproven[4096];   /* the preamble marking forced engine winners ("" none) */
} writeback_tree_result;

/* Plans every set and engine winner of o on o->tree (sets need a scan:
 * o->surf, o->saved, o->scanfile, else the tree is scanned now), builds
 * the diff, and with o->apply writes the changed files (originals to the
 * backup folder, all or nothing), else with o->out writes the diff there.
 * *r is zeroed first. */
int writeback_tree(const writeback_tree_opts *o, writeback_tree_result *r, muh_diag *d);

/* Writes text to path atomically (path.muh-tmp, then renamed). */
int writeback_write_file(const char *path, const char *text, muh_diag *d);

/* ---- what muh patch says (writeback_text.c), on a textout ---- */

/* A file an emitter wrote, for a person (a result): with no path its text
 * itself; else what it holds, and for a moe-json file a line per batch
 * size with its decision and paired intervals. */
void writeback_text_written(const textout *o, const writeback_file *f);
/* An engine run's winner planned into its deployment file: notes (who:
 * what they start with, "muh patch"), with --force's UNPROVEN and a gain
 * inside the noise said. */
void writeback_text_win(const textout *o, const char *who, const writeback_engine_win *w);
/* What --rollback (rollback 1) or --resume did, a line or a JSON object. */
void writeback_text_recovery(const textout *o, const patch_recovery *r, int rollback, int json);
/* A tree's write-back r: as JSON {files_changed, written, backup, diff,
 * unproven}, what --apply wrote, or the diff (none when it went to out);
 * a note when nothing changes. */
void writeback_text_tree(const textout *o, const char *who, const writeback_tree_result *r, int json, int apply,
			 const char *out);

MUH_END_DECLS

#endif
