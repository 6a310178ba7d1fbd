/*
 * cmd_kb.c — `muh kb cccl`: CUB's tuning policies from the installed CCCL
 * headers, as a table, as JSON, or as seeds for a spec (src/search/kb_cccl.c does
 * the work; this file parses options and prints).
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "muh/kb.h"

static const char help[] =
	"usage: muh kb cccl [PATH] [--algorithm NAME] [--arch CC] [--json]\n"
	"       muh kb cccl [PATH] --spec SPEC [--arch CC] [--json]\n"
	"\n"
	"Reads CUB's tuning policies from the CCCL headers (cub/device/dispatch/tuning/\n"
	"tuning_*.cuh) and prints, per algorithm and SM architecture: threads per block,\n"
	"items per thread, vector load length, and the load/store/block algorithm and\n"
	"cache load modifier enums. Values CUB computes at compile time show as '-'.\n"
	"\n"
	"PATH is a tuning directory, a cub or include directory, a toolkit root, or one\n"
	"header. Without PATH: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda, /usr/include\n"
	"(directly and under include/cccl). No headers: exit 3. Headers with no policy\n"
	"recognised: exit 1.\n"
	"\n"
	"With --spec, turns the policies of the spec's `kb: {cccl: ALGORITHM, map: {PARAM:\n"
	"FIELD}}` into seed configurations (docs/kb.md), printed as a `seeds:` block to\n"
	"paste into the spec; policies that apply on the target architecture come first.\n"
	"\n"
	"options:\n"
	"  --algorithm NAME  only this algorithm (reduce, scan, radix_sort, ...)\n"
	"  --arch CC         architecture as major*10+minor (90 = sm_90): only the policies\n"
	"                    CUB dispatches there (the ChainedPolicy pick, and the\n"
	"                    smNN_tuning specializations of the greatest NN <= CC);\n"
	"                    with --spec, default: the spec's hardware profile's cc\n"
	"  --spec SPEC       print seeds for SPEC\n"
	"  --json            JSON: {dir, files, policies: [...]} or {spec, cc, seeds: [...]}\n"
	"\n"
	"examples:\n"
	"  muh kb cccl --algorithm reduce --arch 90\n"
	"  muh kb cccl --spec specs/cuda_reduce.yaml\n";

static void num(char *b, size_t n, int v)
{
	if (v < 0)
		snprintf(b, n, "-");
	else
		snprintf(b, n, "%d", v);
}

static const char *word(const char *w)
{
	return w[0] ? w : "-";
}

static cJSON *policy_json(const kb_policy *p)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "algorithm", p->algorithm);
	cJSON_AddNumberToObject(o, "cc", p->cc);
	cJSON_AddStringToObject(o, "policy", p->policy);
	cJSON_AddStringToObject(o, "variant", p->variant);
	cJSON_AddStringToObject(o, "agent", p->agent);
#define NUMF(k, v)                                   \
	if ((v) >= 0)                                \
		cJSON_AddNumberToObject(o, k, (v));  \
	else                                         \
		cJSON_AddNullToObject(o, k)
	NUMF("threads", p->threads);
	NUMF("items_per_thread", p->items_per_thread);
	NUMF("vector_load_length", p->vector_load_length);
#undef NUMF
	cJSON_AddStringToObject(o, "load_algorithm", p->load_algorithm);
	cJSON_AddStringToObject(o, "load_modifier", p->load_modifier);
	cJSON_AddStringToObject(o, "store_algorithm", p->store_algorithm);
	cJSON_AddStringToObject(o, "block_algorithm", p->block_algorithm);
	cJSON_AddStringToObject(o, "file", p->file);
	cJSON_AddNumberToObject(o, "line", p->line);
	return o;
}

static void print_json(cJSON *o)
{
	char *txt = cJSON_Print(o);
	if (txt)
		puts(txt);
	free(txt);
	cJSON_Delete(o);
}

static int list(const kb_cccl *kb, const char *alg, int cc, int json)
{
	cJSON *o = NULL, *arr = NULL;
	if (json) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "dir", kb->dir);
		cJSON_AddNumberToObject(o, "files", kb->nfiles);
		if (cc)
			cJSON_AddNumberToObject(o, "cc", cc);
		arr = cJSON_AddArrayToObject(o, "policies");
	} else {
		printf("%-18s %-6s %-14s %-22s %7s %5s %4s  %-32s %-13s %-32s %s\n", "algorithm", "arch", "policy",
		       "agent", "threads", "items", "vec", "load algorithm", "load modifier", "block algorithm",
		       "specialization");
	}
	size_t shown = 0;
	for (size_t i = 0; i < kb->n; i++) {
		const kb_policy *p = &kb->v[i];
		if (alg && strcmp(alg, p->algorithm))
			continue;
		if (cc && !kb_cccl_applies(kb, p, cc))
			continue;
		shown++;
		if (json) {
			cJSON_AddItemToArray(arr, policy_json(p));
			continue;
		}
		char arch[16], t[16], it[16], v[16];
		if (p->cc)
			snprintf(arch, sizeof(arch), "sm_%d", p->cc);
		else
			snprintf(arch, sizeof(arch), "-");
		num(t, sizeof(t), p->threads);
		num(it, sizeof(it), p->items_per_thread);
		num(v, sizeof(v), p->vector_load_length);
		printf("%-18s %-6s %-14s %-22s %7s %5s %4s  %-32s %-13s %-32s %s\n", p->algorithm, arch, p->policy,
		       word(p->agent), t, it, v, word(p->load_algorithm), word(p->load_modifier),
		       word(p->block_algorithm[0] ? p->block_algorithm : p->store_algorithm), p->variant);
	}
	if (json)
		print_json(o);
	else {
		printf("%zu polic%s from %d header%s in %s\n", shown, shown == 1 ? "y" : "ies", kb->nfiles,
		       kb->nfiles == 1 ? "" : "s", kb->dir[0] ? kb->dir : "(one file)");
		if (cc && shown)
			printf("(the policies CUB dispatches on sm_%d: a policy of an older arch applies where no newer "
			       "one is written, CUB's ChainedPolicy rule)\n", cc);
	}
	if (shown == 0) {
		fprintf(stderr, "muh kb cccl: no policy%s%s%s\n", alg ? " of algorithm " : "", alg ? alg : "",
			cc ? " for that architecture" : "");
		return EXIT_FINDING;
	}
	return EXIT_OK;
}

static void value_text(const muh_spec *s, size_t param, size_t idx, char *b, size_t n)
{
	value_fmt(b, n, s->params[param].values[idx]);
}

static int seeds(const kb_cccl *kb, const char *spec_path, int cc, int json)
{
	muh_diag d;
	diag_clear(&d);
	muh_spec *s = NULL;
	int rc = spec_load(spec_path, &s, &d);
	if (rc)
		return cli_fail(rc, &d);
	if (!cc && s->hw_ref) {
		muh_hw hw;
		double v;
		if (hw_resolve(s->hw_ref, &hw, &d) == MUH_OK && hw_get(&hw, "cc", &v) == 1)
			cc = (int)v;
	}
	if (!cc) {
		spec_free(s);
		return cli_usage_error("kb", "the spec names no hardware profile with a cc; give --arch");
	}
	kb_seed *v = NULL;
	size_t n = 0;
	diag_clear(&d);
	rc = kb_cccl_seeds(kb, s, cc, &v, &n, &d);
	if (rc) {
		spec_free(s);
		return cli_fail(rc, &d);
	}
	size_t good = 0;
	cJSON *o = NULL, *arr = NULL;
	if (json) {
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "spec", s->path ? s->path : spec_path);
		cJSON_AddStringToObject(o, "algorithm", spec_kv(s, "kb.cccl")->value);
		cJSON_AddNumberToObject(o, "cc", cc);
		arr = cJSON_AddArrayToObject(o, "seeds");
	} else {
		printf("# seeds from CUB's %s policies (%s), target sm_%d first\nseeds:\n",
		       spec_kv(s, "kb.cccl")->value, kb->dir[0] ? kb->dir : "one header", cc);
	}
	for (size_t i = 0; i < n; i++) {
		const kb_seed *sd = &v[i];
		const kb_policy *p = sd->from;
		char from[800];
		snprintf(from, sizeof(from), "%s sm_%d %s%s%s%s%s", p->file, p->cc, p->policy, p->agent[0] ? "::" : "",
			 p->agent, p->variant[0] ? " <" : "", p->variant[0] ? p->variant : "");
		if (p->variant[0])
			snprintf(from + strlen(from), sizeof(from) - strlen(from), ">");
		good += sd->ok;
		if (json) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddStringToObject(e, "from", from);
			cJSON_AddBoolToObject(e, "applies", sd->applies);
			cJSON_AddBoolToObject(e, "ok", sd->ok);
			if (sd->why[0])
				cJSON_AddStringToObject(e, sd->ok ? "note" : "why", sd->why);
			cJSON *cfg = cJSON_AddObjectToObject(e, "config");
			for (size_t k = 0; sd->ok && k < s->nparams; k++) {
				if (sd->idx[k] == SIZE_MAX)
					continue;
				muh_value x = s->params[k].values[sd->idx[k]];
				if (x.t == MUH_STR)
					cJSON_AddStringToObject(cfg, s->params[k].name, x.u.s);
				else
					cJSON_AddNumberToObject(cfg, s->params[k].name,
								x.t == MUH_INT ? (double)x.u.i : x.u.f);
			}
			cJSON_AddItemToArray(arr, e);
			continue;
		}
		if (!sd->ok) {
			printf("  # not a seed: %s (%s)\n", sd->why, from);
			continue;
		}
		printf("  - {");
		int first = 1;
		for (size_t k = 0; k < s->nparams; k++) {
			if (sd->idx[k] == SIZE_MAX)
				continue;
			char b[128];
			value_text(s, k, sd->idx[k], b, sizeof(b));
			printf("%s%s: %s", first ? "" : ", ", s->params[k].name, b);
			first = 0;
		}
		printf("}   # %s%s%s%s\n", from, sd->applies ? " (applies)" : "", sd->why[0] ? "; " : "", sd->why);
	}
	if (json)
		print_json(o);
	kb_seeds_free(v, n);
	spec_free(s);
	if (good == 0) {
		fprintf(stderr, "muh kb cccl: no policy maps onto the spec's values\n");
		return EXIT_FINDING;
	}
	return EXIT_OK;
}

static int run(int argc, char **argv)
{
	int json = 0, first;
	uint64_t cc = 0;
	const char *alg = NULL, *spec = NULL;
	const struct cli_opt opts[] = {
		CLI_OPT("json", CLI_FLAG, &json),
		CLI_OPT("algorithm", CLI_STR, &alg),
		CLI_OPT("arch", CLI_UINT, &cc, .lo = 1, .hi = 10000, .expected = "a compute capability such as 90"),
		CLI_OPT("spec", CLI_STR, &spec),
		CLI_END,
	};
	int prc = cli_parse_opts("kb", argc, argv, opts, NULL, NULL, &first);
	if (prc)
		return prc;
	if (first >= argc || strcmp(argv[first], "cccl") != 0)
		return cli_usage_error("kb", "expected a source: cccl");
	first++;
	if (argc - first > 1)
		return cli_usage_error("kb", "expected at most one PATH");
	const char *path = first < argc ? argv[first] : NULL;
	muh_diag d;
	diag_clear(&d);
	char dir[1024];
	const char *read_path = path;
	if (!path || strstr(path, ".cuh") == NULL) {
		int rc = kb_cccl_find(path, dir, sizeof(dir), &d);
		if (rc) {
			fprintf(stderr, "muh kb cccl: %s\n", d.msg);
			return cli_exit(rc);
		}
		read_path = dir;
	}
	kb_cccl kb;
	memset(&kb, 0, sizeof(kb));
	int rc = kb_cccl_read(read_path, &kb, &d);
	if (rc) {
		fprintf(stderr, "muh kb cccl: %s\n", d.msg);
		kb_cccl_free(&kb);
		return cli_exit(rc);
	}
	if (kb.n == 0) {
		fprintf(stderr, "muh kb cccl: no tuning policy recognised in %s (%d headers read)\n", read_path,
			kb.nfiles);
		kb_cccl_free(&kb);
		return EXIT_FINDING;
	}
	if (alg && !spec) {
		/* an algorithm no header has is a usage error, not an empty finding */
		size_t i;
		for (i = 0; i < kb.n && strcmp(kb.v[i].algorithm, alg); i++)
			;
		if (i == kb.n) {
			char known[512] = "";
			size_t n = 0;
			for (size_t j = 0; j < kb.n && n < sizeof(known); j++) {
				size_t k;
				for (k = 0; k < j && strcmp(kb.v[k].algorithm, kb.v[j].algorithm); k++)
					;
				if (k == j)
					n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", n ? ", " : "",
							      kb.v[j].algorithm);
			}
			fprintf(stderr, "muh kb cccl: --algorithm %s: no such algorithm in %s; known: %s\n", alg,
				read_path, known);
			kb_cccl_free(&kb);
			return EXIT_USAGE;
		}
	}
	int ex = spec ? seeds(&kb, spec, (int)cc, json) : list(&kb, alg, (int)cc, json);
	kb_cccl_free(&kb);
	return ex;
}

MUH_COMMAND(kb, 65, "prior knowledge: CUB tuning policies from the CCCL headers, as seeds");
