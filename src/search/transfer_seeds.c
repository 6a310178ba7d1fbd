/*
 * transfer_seeds.c — seeds from earlier results (see transfer_seeds.h).
 *
 * Owns: choosing which stored runs and which imported results become seeds,
 * in which order, and the sentence that says where each came from. Reads
 * the store through store_foreach_run / store_foreach only, and files with
 * cJSON.
 * Must never: write to the store or a file, or hand out a configuration
 * that is not valid in the space or that is already a seed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json_int.h"
#include "strbuf.h"

#include "muh/fileio.h"
#include "muh/muh.h"
#include "muh/transfer_seeds.h"

void transfer_seeds_init(transfer_seeds *ts, const muh_space *sp)
{
	memset(ts, 0, sizeof(*ts));
	ts->sp = sp;
	ts->np = space_nparams(sp);
}

void transfer_seeds_free(transfer_seeds *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		free(ts->from[i]);
	free(ts->from);
	free(ts->cfgs);
	memset(ts, 0, sizeof(*ts));
}

/* Appends cfg with its sentence, unless it is not valid here or already a
 * seed (then counted in left_out). Returns 1 added, 0 left out, or
 * MUH_ENOMEM (negative). */
static int add_seed(transfer_seeds *ts, const uint32_t *cfg, const char *from)
{
	if (!space_is_valid(ts->sp, cfg)) {
		ts->left_out++;
		return 0;
	}
	for (size_t i = 0; i < ts->n; i++)
		if (!memcmp(ts->cfgs + i * ts->np, cfg, ts->np * sizeof(uint32_t))) {
			ts->left_out++;
			return 0;
		}
	if (ts->n == ts->cap) {
		size_t cap = ts->cap ? ts->cap * 2 : 8;
		uint32_t *nc = realloc(ts->cfgs, cap * (ts->np ? ts->np : 1) * sizeof(uint32_t));
		if (!nc)
			return -MUH_ENOMEM;
		ts->cfgs = nc;
		char **nf = realloc(ts->from, cap * sizeof(char *));
		if (!nf)
			return -MUH_ENOMEM;
		ts->from = nf;
		ts->cap = cap;
	}
	char *f = strdup(from);
	if (!f)
		return -MUH_ENOMEM;
	memcpy(ts->cfgs + ts->n * ts->np, cfg, ts->np * sizeof(uint32_t));
	ts->from[ts->n++] = f;
	return 1;
}

/* A score as a person reads it: the objective's value with a unit for
 * time. */
static void fmt_score(const muh_objective *o, double score, char *buf, size_t n)
{
	double v = o ? objective_value(o, score) : score;
	if (!o || !strcmp(o->metric, "time")) {
		if (v < 1e-3)
			snprintf(buf, n, "%.1f us", v * 1e6);
		else if (v < 1)
			snprintf(buf, n, "%.3f ms", v * 1e3);
		else
			snprintf(buf, n, "%.3f s", v);
	} else {
		snprintf(buf, n, "%.40s %.4g", o->metric, v);
	}
}

/* ---- problem distance ---------------------------------------------------- */

/* The value of NAME in a "NAME=VALUE,..." text, copied into out (n bytes);
 * 0 when absent. */
static int problem_get(const char *text, const char *name, char *out, size_t n)
{
	size_t len = strlen(name);
	for (const char *q = text; q && *q;) {
		const char *eq = strchr(q, '=');
		if (!eq)
			return 0;
		const char *end = strchr(eq, ',');
		size_t vlen = end ? (size_t)(end - eq - 1) : strlen(eq + 1);
		if ((size_t)(eq - q) == len && !strncmp(q, name, len)) {
			snprintf(out, n, "%.*s", (int)vlen, eq + 1);
			return 1;
		}
		q = end ? end + 1 : NULL;
	}
	return 0;
}

static int as_number(const char *s, double *x)
{
	char *end;
	errno = 0;
	*x = strtod(s, &end);
	return end != s && !*end && !errno;
}

/* How far a run's problem values lie from instance's (see the header), and
 * the symbols that differ ("M=1024") into what (n bytes). */
static double problem_distance(const muh_spec *s, size_t instance, const char *problem, char *what,
			       size_t n)
{
	double dist = 0;
	size_t w = 0;
	if (n)
		what[0] = '\0';
	for (size_t k = 0; k < s->nproblem; k++) {
		char mine[64], theirs[64];
		value_fmt(mine, sizeof(mine), spec_problem_value(s, k, instance));
		if (!problem || !problem_get(problem, s->problem[k].name, theirs, sizeof(theirs))) {
			dist += 64;
			continue;
		}
		if (!strcmp(mine, theirs))
			continue;
		double a, b;
		if (as_number(mine, &a) && as_number(theirs, &b))
			dist += a > 0 && b > 0 ? fabs(log2(a) - log2(b)) : fabs(a - b);
		else
			dist += 64;
		if (w + 1 < n)
			w += (size_t)snprintf(what + w, n - w, "%s%s=%s", w ? "," : "", s->problem[k].name,
					      theirs);
	}
	return dist;
}

/* ---- from the store --------------------------------------------------------- */

struct cand_run {
	int64_t id;
	double dist;
	char what[160];
	char backend[64];
	int64_t n;
};

struct run_scan {
	const muh_spec *s;
	size_t instance;
	char hash[17];
	char mine[512];
	struct cand_run *runs;
	size_t n, cap;
	int oom;
};

static int scan_run(void *ud, const store_run *r)
{
	struct run_scan *rs = ud;
	int same = (r->spec_hash && !strcmp(r->spec_hash, rs->hash)) ||
		   (rs->s->name && r->spec_name && !strcmp(rs->s->name, r->spec_name));
	if (!same || r->nmeasurements == 0 || (r->problem && !strcmp(r->problem, rs->mine)))
		return 0;
	if (array_grow(&rs->runs, &rs->cap, rs->n, sizeof(*rs->runs), 8)) {
		rs->oom = 1;
		return 1;
	}
	struct cand_run *c = &rs->runs[rs->n++];
	c->id = r->id;
	c->n = r->nmeasurements;
	c->dist = problem_distance(rs->s, rs->instance, r->problem, c->what, sizeof(c->what));
	snprintf(c->backend, sizeof(c->backend), "%s", r->backend ? r->backend : "?");
	return 0;
}

static int cmp_run(const void *a, const void *b)
{
	const struct cand_run *x = a, *y = b;
	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->id > y->id ? -1 : x->id < y->id; /* latest first */
}

struct scored {
	double score;
	uint32_t *cfg;
};

struct row_scan {
	const muh_space *sp;
	const muh_objective *o;
	struct scored *rows;
	size_t n, cap, ok;
	int oom;
};

static int scan_row(void *ud, const store_row *row)
{
	struct row_scan *rs = ud;
	if (row->m->status != EVAL_OK)
		return 0;
	double score = rs->o ? objective_search_score(rs->o, row->m, NULL) : row->m->median;
	if (!isfinite(score))
		return 0;
	rs->ok++;
	size_t np = space_nparams(rs->sp);
	uint32_t *cfg = malloc((np ? np : 1) * sizeof(uint32_t));
	if (!cfg) {
		rs->oom = 1;
		return 1;
	}
	muh_diag d;
	if (space_parse_key(rs->sp, row->key, cfg, &d) || !space_is_valid(rs->sp, cfg)) {
		free(cfg); /* a configuration of another space */
		return 0;
	}
	if (array_grow(&rs->rows, &rs->cap, rs->n, sizeof(*rs->rows), 64)) {
		free(cfg);
		rs->oom = 1;
		return 1;
	}
	rs->rows[rs->n].score = score;
	rs->rows[rs->n++].cfg = cfg;
	return 0;
}

static int cmp_scored(const void *a, const void *b)
{
	const struct scored *x = a, *y = b;
	return x->score < y->score ? -1 : x->score > y->score;
}

int transfer_seeds_from_store(transfer_seeds *ts, muh_store *st, const char *store_name, size_t instance,
			      const muh_objective *o, size_t k, size_t max_instances, muh_diag *d)
{
	const muh_spec *s = space_spec(ts->sp);
	struct run_scan rs = {.s = s, .instance = instance};
	store_spec_hash(s->text ? s->text : "", s->text ? strlen(s->text) : 0, rs.hash);
	spec_problem_text(s, instance, rs.mine, sizeof(rs.mine));
	int rc = store_foreach_run(st, scan_run, &rs);
	if (rs.oom) {
		free(rs.runs);
		return MUH_ENOMEM;
	}
	if (rc) {
		free(rs.runs);
		diag_errorf(d, "cannot read the runs of %s", store_name);
		return MUH_EENV;
	}
	if (rs.n)
		qsort(rs.runs, rs.n, sizeof(*rs.runs), cmp_run);
	for (size_t r = 0; r < rs.n && r < max_instances && !rc; r++) {
		struct row_scan rows = {.sp = ts->sp, .o = o};
		rc = store_foreach(st, rs.runs[r].id, scan_row, &rows);
		if (rows.oom)
			rc = MUH_ENOMEM;
		else if (rc)
			rc = MUH_EENV;
		if (rows.n)
			qsort(rows.rows, rows.n, sizeof(*rows.rows), cmp_scored);
		for (size_t i = 0, taken = 0; i < rows.n && taken < k && !rc; i++) {
			char from[1024], val[96];
			fmt_score(o, rows.rows[i].score, val, sizeof(val));
			snprintf(from, sizeof(from), "%s run %lld (%s, %s): its #%zu of %zu ok, %s", store_name,
				 (long long)rs.runs[r].id, rs.runs[r].what[0] ? rs.runs[r].what : "other problem",
				 rs.runs[r].backend, i + 1, rows.ok, val);
			int a = add_seed(ts, rows.rows[i].cfg, from);
			if (a < 0)
				rc = -a;
			taken += a > 0;
		}
		for (size_t i = 0; i < rows.n; i++)
			free(rows.rows[i].cfg);
		free(rows.rows);
	}
	free(rs.runs);
	if (rc == MUH_EENV)
		diag_errorf(d, "cannot read the measurements of %s", store_name);
	return rc;
}

/* ---- from files ------------------------------------------------------------- */

/* The index of JSON value v among par's values; -1 when it is none of them. */
long transfer_seeds_match_value(const muh_param *par, const cJSON *v)
{
	for (size_t i = 0; i < par->nvalues; i++) {
		muh_value pv = par->values[i];
		if (cJSON_IsNumber(v)) {
			if ((pv.t == MUH_INT && (double)pv.u.i == v->valuedouble) ||
			    (pv.t == MUH_FLOAT && pv.u.f == v->valuedouble))
				return (long)i;
		} else if (cJSON_IsBool(v)) {
			if (pv.t == MUH_INT && pv.u.i == (cJSON_IsTrue(v) ? 1 : 0))
				return (long)i;
		} else if (cJSON_IsString(v)) {
			char buf[64];
			if (pv.t == MUH_STR ? !strcmp(pv.u.s, v->valuestring)
					    : (value_fmt(buf, sizeof(buf), pv), !strcmp(buf, v->valuestring)))
				return (long)i;
		}
	}
	return -1;
}

/* cfg from a JSON object of param values (params it omits: their defaults).
 * 0 when a value is not one of the param's. */
static int cfg_from_json(const muh_space *sp, const cJSON *obj, uint32_t *cfg)
{
	const muh_spec *s = space_spec(sp);
	space_default(sp, cfg);
	for (size_t p = 0; p < s->nparams; p++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, s->params[p].name);
		if (!v)
			continue;
		long i = transfer_seeds_match_value(&s->params[p], v);
		if (i < 0)
			return 0;
		cfg[p] = (uint32_t)i;
	}
	return 1;
}

/* A T4 result's time in milliseconds: its "time" measurement, else the mean
 * of its runtimes; NAN when it has neither or is not correct. */
static double t4_time(const cJSON *r)
{
	const cJSON *inv = cJSON_GetObjectItemCaseSensitive(r, "invalidity");
	if (cJSON_IsString(inv) && strcmp(inv->valuestring, "correct"))
		return NAN;
	const cJSON *ms = cJSON_GetObjectItemCaseSensitive(r, "measurements"), *e;
	cJSON_ArrayForEach(e, ms)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
		const cJSON *val = cJSON_GetObjectItemCaseSensitive(e, "value");
		if (cJSON_IsString(name) && !strcmp(name->valuestring, "time") && cJSON_IsNumber(val))
			return val->valuedouble;
	}
	const cJSON *times = cJSON_GetObjectItemCaseSensitive(r, "times");
	const cJSON *rt = cJSON_GetObjectItemCaseSensitive(times, "runtimes");
	double sum = 0;
	int n = 0;
	cJSON_ArrayForEach(e, rt)
	{
		if (cJSON_IsNumber(e)) {
			sum += e->valuedouble;
			n++;
		}
	}
	return n ? sum / n : NAN;
}

int transfer_seeds_batch_size(const muh_spec *s, size_t instance, double *m)
{
	long pick = -1, varying = 0;
	for (size_t k = 0; k < s->nproblem; k++) {
		if (!strcmp(s->problem[k].name, "M"))
			pick = (long)k;
		varying += s->problem[k].nvalues > 1;
	}
	if (pick < 0 && varying == 1)
		for (size_t k = 0; k < s->nproblem; k++)
			if (s->problem[k].nvalues > 1)
				pick = (long)k;
	if (pick < 0)
		return 0;
	muh_value v = spec_problem_value(s, (size_t)pick, instance);
	*m = v.t == MUH_STR ? NAN : value_num(v);
	return isfinite(*m);
}

struct keyed {
	double dist, key;
	const cJSON *cfg;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* 1 when every member of obj is named by an integer and is an object. */
static int is_vllm_config(const cJSON *obj)
{
	const cJSON *e;
	int n = 0;
	cJSON_ArrayForEach(e, obj)
	{
		double x;
		if (!e->string || !as_number(e->string, &x) || x != floor(x) || !cJSON_IsObject(e))
			return 0;
		n++;
	}
	return n > 0;
}

/* Where the rows of a result file come from, for a seed's "from" text. */
struct seed_origin {
	const char *path;
	int have; /* vLLM: the instance has a batch size to be near */
};

/* Writes a seed's "from" text: row i of the m sorted rows of o. */
typedef void (*seed_origin_text)(char *buf, size_t n, const struct seed_origin *o,
				 const struct keyed *row, size_t i, size_t m);

/* Sorts the m rows (cmp_keyed: nearest or fastest first) and adds the first
 * k that are configurations of the space as seeds, described by text; a row
 * that is not one counts in ts->left_out. Frees rows and cfg (scratch of np
 * values). Returns a MUH_ status. */
static int seed_nearest_rows(transfer_seeds *ts, struct keyed *rows, size_t m, uint32_t *cfg, size_t k,
			     const struct seed_origin *o, seed_origin_text text)
{
	if (m)
		qsort(rows, m, sizeof(*rows), cmp_keyed);
	int rc = MUH_OK;
	for (size_t i = 0, taken = 0; i < m && taken < k && !rc; i++) {
		if (!cfg_from_json(ts->sp, rows[i].cfg, cfg)) {
			ts->left_out++;
			continue;
		}
		char from[512];
		text(from, sizeof(from), o, &rows[i], i, m);
		int a = add_seed(ts, cfg, from);
		if (a < 0)
			rc = -a;
		taken += a > 0;
	}
	free(rows);
	free(cfg);
	return rc;
}

/* The rows (n of them) and the configuration scratch seed_nearest_rows
 * takes; MUH_ENOMEM with nothing allocated. */
static int seed_rows_alloc(const transfer_seeds *ts, size_t n, struct keyed **rows, uint32_t **cfg)
{
	*rows = calloc(n ? n : 1, sizeof(**rows));
	*cfg = malloc((ts->np ? ts->np : 1) * sizeof(uint32_t));
	if (!*rows || !*cfg) {
		free(*rows);
		free(*cfg);
		return MUH_ENOMEM;
	}
	return MUH_OK;
}

static void t4_origin_text(char *buf, size_t n, const struct seed_origin *o, const struct keyed *row,
			   size_t i, size_t m)
{
	snprintf(buf, n, "%s (T4): its #%zu of %zu correct, %.4g ms", o->path, i + 1, m, row->dist);
}

static int from_t4(transfer_seeds *ts, const char *path, const cJSON *results, size_t k)
{
	size_t n = (size_t)cJSON_GetArraySize(results), m = 0;
	struct keyed *rows;
	uint32_t *cfg;
	if (seed_rows_alloc(ts, n, &rows, &cfg))
		return MUH_ENOMEM;
	const cJSON *r;
	cJSON_ArrayForEach(r, results)
	{
		double t = t4_time(r);
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(r, "configuration");
		if (isfinite(t) && cJSON_IsObject(c)) {
			rows[m].dist = t;
			rows[m++].cfg = c;
		}
	}
	struct seed_origin o = {path, 0};
	return seed_nearest_rows(ts, rows, m, cfg, k, &o, t4_origin_text);
}

static void vllm_origin_text(char *buf, size_t n, const struct seed_origin *o, const struct keyed *row,
			     size_t i, size_t m)
{
	(void)i;
	(void)m;
	snprintf(buf, n, "%s (vLLM config): batch size %.0f%s", o->path, row->key,
		 o->have ? (row->dist == 0 ? ", this instance's" : ", the nearest left") : "");
}

static int from_vllm(transfer_seeds *ts, const char *path, const cJSON *obj, size_t instance, size_t k)
{
	const muh_spec *s = space_spec(ts->sp);
	double want = 0;
	int have = transfer_seeds_batch_size(s, instance, &want);
	size_t n = (size_t)cJSON_GetArraySize(obj), m = 0;
	struct keyed *rows;
	uint32_t *cfg;
	if (seed_rows_alloc(ts, n, &rows, &cfg))
		return MUH_ENOMEM;
	const cJSON *e;
	cJSON_ArrayForEach(e, obj)
	{
		double key = strtod(e->string, NULL);
		rows[m].key = key;
		rows[m].dist = !have ? 0 : key > 0 && want > 0 ? fabs(log2(key) - log2(want)) : fabs(key - want);
		rows[m++].cfg = e;
	}
	struct seed_origin o = {path, have};
	return seed_nearest_rows(ts, rows, m, cfg, k, &o, vllm_origin_text);
}

int transfer_seeds_from_file(transfer_seeds *ts, const char *path, size_t instance, size_t k,
			     muh_diag *d)
{
	size_t len;
	char *text = diag_file_read(path, &len, "result file", d);
	if (!text)
		return MUH_EENV;
	cJSON *root = json_parse_at(text, len, path, d);
	if (!root) {
		diag_errorf(d, "not JSON; expected T4 results or a vLLM config");
		free(text);
		return MUH_EINPUT;
	}
	int rc;
	const cJSON *results = cJSON_GetObjectItemCaseSensitive(root, "results");
	if (cJSON_IsObject(root) && cJSON_IsArray(results)) {
		rc = from_t4(ts, path, results, k);
	} else if (cJSON_IsObject(root) && is_vllm_config(root)) {
		rc = from_vllm(ts, path, root, instance, k);
	} else {
		diag_at(d, path, 1, 1, text);
		rc = diag_errorf(d, "expected T4 results (an object with a \"results\" array) or a vLLM config "
				    "(an object keyed by batch size, each a config object)");
	}
	cJSON_Delete(root);
	free(text);
	return rc;
}

int transfer_seeds_gather(transfer_seeds *ts, const char *store_path, int from_store,
			  const char *const *files, size_t nfiles, size_t instance, const muh_objective *o,
			  muh_diag *d)
{
	int rc = MUH_OK;
	FILE *f = store_path && from_store ? fopen(store_path, "rb") : NULL;
	int has_store = f && fgetc(f) != EOF;
	if (f)
		fclose(f);
	if (has_store) {
		muh_store *st;
		rc = store_open_ro(store_path, &st, d);
		if (!rc) {
			rc = transfer_seeds_from_store(ts, st, store_path, instance, o, TRANSFER_K,
						       TRANSFER_INSTANCES, d);
			store_close(st);
		} else {
			/* not readable as a store yet (another muh is creating it: a
			 * database without tables) or not a store at all: no seeds from
			 * it; the writer's open right after says why if it is not one */
			diag_clear(d);
			rc = MUH_OK;
		}
	}
	for (size_t i = 0; i < nfiles && !rc; i++)
		rc = transfer_seeds_from_file(ts, files[i], instance, TRANSFER_K, d);
	return rc;
}

void transfer_seeds_print(const transfer_seeds *ts, const textout *f, int json)
{
	char key[4096];
	for (size_t i = 0; i < ts->n; i++) {
		space_key(ts->sp, ts->cfgs + i * ts->np, key, sizeof(key));
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddStringToObject(o, "event", "transfer_seed");
			cJSON_AddNumberToObject(o, "seed", (double)(i + 1));
			cJSON_AddStringToObject(o, "key", key);
			cJSON_AddStringToObject(o, "from", ts->from[i]);
			textout_json(f, o, 0);
		} else {
			textout_printf(f, TEXTOUT_RESULT, "transfer    T%zu %s\n            from %s\n", i + 1, key,
				       ts->from[i]);
		}
	}
}
