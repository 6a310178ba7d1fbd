/*
 * evalcli.c — what muh eval and muh verify share: load a spec, resolve its
 * hardware profile, build the space of one problem instance, read the
 * target, and print measurements. CLI only; the work is in libmuh.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "evalcli.h"
#include "muh/objective.h"

int evalcli_load_space(const char *cmd, const char *path, const char *hwref, size_t inst,
		       struct evalcli *ec)
{
	memset(ec, 0, sizeof(*ec));
	muh_diag d;
	diag_clear(&d);
	int rc = spec_load(path, &ec->spec, &d);
	if (rc)
		return cli_fail(rc, &d);
	muh_spec *s = ec->spec;
	if (inst >= spec_ninstances(s)) {
		fprintf(stderr, "muh %s: --problem %zu, but %s has %zu problem instance(s)\n", cmd, inst, s->path,
			spec_ninstances(s));
		evalcli_free(ec);
		return EXIT_USAGE;
	}
	ec->instance = inst;
	if (hwref || s->hw_ref) {
		rc = hw_resolve(hwref ? hwref : s->hw_ref, &ec->hw, &d);
		if (rc && !hwref && rc == MUH_EINPUT && !d.line) {
			/* the spec named it: point at its hw: line */
			char msg[MUH_DIAG_MSG];
			snprintf(msg, sizeof(msg), "%s", d.msg);
			spec_diag_at(s, &d, s->hw_line, s->hw_col);
			diag_errorf(&d, "%s", msg);
		}
		if (rc) {
			if (rc == MUH_EENV)
				fprintf(stderr, "muh %s: %s\n", cmd, d.msg);
			else
				diag_print(stderr, &d);
			evalcli_free(ec);
			return cli_exit(rc);
		}
		ec->hwp = &ec->hw;
	}
	diag_clear(&d);
	rc = space_build(s, ec->hwp, inst, &ec->space, &d);
	if (rc) {
		evalcli_free(ec);
		return cli_fail(rc, &d);
	}
	return EXIT_OK;
}

int evalcli_load(const char *cmd, const char *path, const char *hwref, size_t inst, struct evalcli *ec)
{
	int ex = evalcli_load_space(cmd, path, hwref, inst, ec);
	if (ex)
		return ex;
	muh_diag d;
	diag_clear(&d);
	int rc = eval_target_from_spec(ec->spec, &ec->target, &d);
	if (rc) {
		evalcli_free(ec);
		return cli_fail(rc, &d);
	}
	return EXIT_OK;
}

void evalcli_free(struct evalcli *ec)
{
	space_free(ec->space);
	spec_free(ec->spec);
	memset(ec, 0, sizeof(*ec));
}

int evalcli_open(const char *cmd, struct evalcli *ec, muh_evaluator **ev)
{
	muh_diag d;
	diag_clear(&d);
	int rc = eval_open(&ec->target, ev, &d);
	if (!rc)
		rc = eval_probe(*ev, &d);
	if (rc) {
		if (rc == MUH_EINPUT)
			return cli_fail(rc, &d);
		fprintf(stderr, "muh %s: %s\n", cmd, d.msg[0] ? d.msg : "the backend cannot start");
		eval_close(*ev);
		*ev = NULL;
		return cli_exit(rc);
	}
	return EXIT_OK;
}

void evalcli_fmt_time(char *buf, size_t n, double s)
{
	if (!isfinite(s))
		snprintf(buf, n, "-");
	else if (s < 1e-3)
		snprintf(buf, n, "%.2f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, n, "%.3f ms", s * 1e3);
	else
		snprintf(buf, n, "%.3f s", s);
}

void evalcli_fmt_median(char *buf, size_t n, const muh_measurement *m)
{
	double tps = measurement_metric(m, "output_tokens_per_s");
	if (isfinite(tps))
		objective_format("output_tokens_per_s", tps, buf, n);
	else
		evalcli_fmt_time(buf, n, m->median);
}

void evalcli_print_row(FILE *f, const char *key, const muh_measurement *m, int keyw)
{
	char med[32], ci[48] = "";
	evalcli_fmt_median(med, sizeof(med), m);
	if (m->status == EVAL_OK && m->median > 0)
		snprintf(ci, sizeof(ci), "+-%.2f%%", 50.0 * (m->ci_hi - m->ci_lo) / m->median);
	char note[96] = "";
	if (m->status == EVAL_OK && m->noisy && m->median > 0)
		snprintf(note, sizeof(note), "noisy: CI +-%.2f%% > %g%%", 50.0 * (m->ci_hi - m->ci_lo) / m->median,
			 100.0 * (isfinite(m->ci_target) ? m->ci_target : 0));
	fprintf(f, "%-*s  %-13s %12s %9s %5zu  %-16s  %s\n", keyw, key, eval_status_name(m->status), med, ci,
		m->nsamples, m->fingerprint[0] ? m->fingerprint : "-", m->status == EVAL_OK ? note : m->error);
}

cJSON *evalcli_json(const char *key, const muh_measurement *m)
{
	char *mj = measurement_to_json(m);
	cJSON *o = mj ? cJSON_Parse(mj) : cJSON_CreateObject();
	free(mj);
	cJSON_AddStringToObject(o, "key", key);
	return o;
}

void evalcli_problem(const muh_spec *s, size_t instance, char *buf, size_t n)
{
	size_t pn = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < s->nproblem && pn + 64 < n; k++) {
		char v[64];
		value_fmt(v, sizeof(v), spec_problem_value(s, k, instance));
		pn += (size_t)snprintf(buf + pn, n - pn, "%s%s=%s", k ? "," : "", s->problem[k].name, v);
	}
}

int evalcli_begin_run(const char *cmd, const struct evalcli *ec, const char *db, int fresh,
		      muh_store **st, int64_t *run, int *resumed)
{
	const muh_spec *s = ec->spec;
	char hash[17], problem[512];
	muh_diag d;
	diag_clear(&d);
	store_spec_hash(s->text ? s->text : "", s->text ? strlen(s->text) : 0, hash);
	evalcli_problem(s, ec->instance, problem, sizeof(problem));
	store_run_info ri = {.spec_hash = hash,
			     .spec_path = s->path,
			     .spec_name = s->name,
			     .instance = (int64_t)ec->instance,
			     .problem = problem,
			     .backend = ec->target.backend,
			     .hw_profile = ec->hwp ? ec->hwp->name : "",
			     .spec_text = s->text};
	*st = NULL;
	int rc = store_open(db, st, &d);
	if (!rc)
		rc = store_begin_run(*st, &ri, fresh, run, resumed, &d);
	if (rc) {
		fprintf(stderr, "muh %s: %s\n", cmd, d.msg);
		store_close(*st);
		*st = NULL;
		return cli_exit(rc);
	}
	return EXIT_OK;
}
