/*
 * patch_int.h — what the files of write-back share: an edit plan's edits and
 * files (struct muh_patch), and the functions one of them calls in another.
 * Internal to libmuh; not installed.
 *
 * The files: patch.c (edit plans, the safety checks, applying edits in memory,
 * overlays, knobs from a saved scan), patch_diff.c (the unified diff),
 * patch_apply.c (atomic in-place application, the journal, rollback and
 * resume), patch_emit.c (the emitters and who reads what they write).
 */
#ifndef MUH_PATCH_INT_H
#define MUH_PATCH_INT_H

#include <stddef.h>
#include <stdint.h>

#include <tree_sitter/api.h>

#include "muh/patch.h"

const TSLanguage *tree_sitter_python(void);

struct edit {
	char id[20];
	char *file; /* relative to root */
	uint32_t start, end;
	char *text;
	uint64_t hash; /* file hash at scan time; 0 = unknown */
	char *deploy;  /* a deployment file's argument: its knob name, set by
	                  deploy_set (argv-aware) instead of a byte edit */
	int whole;     /* text is the file's whole new content (patch_plan_set_file) */
	int comment;   /* text ends in a # comment: only at the end of a line */
	size_t wholelen;
};

struct pfile {
	char *rel;
	char *old, *new;
	size_t oldlen, newlen;
	struct edit **edits; /* ascending by start */
	size_t nedits;
};

struct muh_patch {
	char *root;
	struct edit *edits;
	size_t nedits, cap;
	struct pfile *files;
	size_t nfiles;
	int built;
	int follow_symlinks; /* patch_plan_follow_symlinks */
};

/* ---- patch.c ---- */

/* Does s end with suf? */
int patch_ends_with(const char *s, const char *suf);

/* Reads path whole into a NUL-terminated malloc'd buffer. */
int patch_slurp(const char *path, char **buf, size_t *len, muh_diag *d);

/* patch_slurp for a file muh reads as input (a scan's knobs, a journal):
 * one it cannot read is bad input, MUH_EINPUT rather than MUH_EENV. */
int patch_slurp_input(const char *path, char **buf, size_t *len, muh_diag *d);

#endif
