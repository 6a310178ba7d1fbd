/*
 * evalcli.h — shared by muh eval and muh verify (see evalcli.c).
 */
#ifndef MUH_EVALCLI_H
#define MUH_EVALCLI_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "muh/eval.h"
#include "muh/store.h"

struct evalcli {
	muh_spec *spec;
	muh_hw hw, *hwp;
	muh_space *space;
	size_t instance;
	muh_target target;
};

/* Loads spec path, its profile (hwref overrides) and the space of instance
 * inst; reads the target. Returns an exit code (EXIT_OK on success) and has
 * printed the error otherwise. */
int evalcli_load(const char *cmd, const char *path, const char *hwref, size_t inst, struct evalcli *ec);
/* The same without the target: spec, profile and space only (muh space,
 * muh tune --replay). */
int evalcli_load_space(const char *cmd, const char *path, const char *hwref, size_t inst,
		       struct evalcli *ec);
void evalcli_free(struct evalcli *ec);
/* Opens and probes the evaluator; prints "muh CMD: no CUDA device" and
 * returns 3 when the backend cannot start here. */
int evalcli_open(const char *cmd, struct evalcli *ec, muh_evaluator **ev);
/* The problem instance as the store records it: "NAME=VALUE,..." in spec
 * order ("" when the spec has no problem symbols). */
void evalcli_problem(const muh_spec *s, size_t instance, char *buf, size_t n);

/* Opens the store db and begins (or resumes) the run of ec's spec, instance
 * and backend. Returns an exit code, having printed the error otherwise. */
int evalcli_begin_run(const char *cmd, const struct evalcli *ec, const char *db, int fresh,
		      muh_store **st, int64_t *run, int *resumed);
void evalcli_fmt_time(char *buf, size_t n, double s);
/* A measurement's median for a person: its output tokens/s when it has that
 * metric (engine runs: the median is seconds per output token), else its time. */
void evalcli_fmt_median(char *buf, size_t n, const muh_measurement *m);
/* One aligned table row: key, status, median, CI, samples, fingerprint, error. */
void evalcli_print_row(FILE *f, const char *key, const muh_measurement *m, int keyw);
cJSON *evalcli_json(const char *key, const muh_measurement *m);

#endif
