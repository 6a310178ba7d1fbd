/*
 * test_pyflow.c — the per-file facts the cross-module rules of muh scan
 * stand on (src/scan/pyfile.c, src/scan/pyfile.h), one small Python source each:
 *   - strings naming definitions: a dotted path, a class name beside a module
 *     path in one call, an identifier string on the line after a module path;
 *   - `from m import *` (alias "*"), getattr(x, 'NAME') as an attribute read;
 *   - `if __name__ == '__main__':` as PF_X_MAIN, is_device_capability_family
 *     as a capability check of one major version;
 *   - classes that declare their device (plat_expr), setters of globals
 *     (gsets), unconditional calls in a function body (PF_C_UNCOND).
 * The tree-level verdicts built on them are tested end to end by
 * tests/cli/scan_flow.sh and scan_args.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first */
#include <cmocka.h>

#include <string.h>

#include "../../src/scan/pyfile.h"

static pyfile *parse(const char *src)
{
	pyfile *f = pyfile_analyze(src, strlen(src), "pkg.mod", 0);
	assert_non_null(f);
	return f;
}

/* The ref named name with all of flags, or NULL. */
static const pf_ref *ref_with(const pyfile *f, const char *name, unsigned flags)
{
	for (int i = 0; i < f->nrefs; i++)
		if (!strcmp(f->refs[i].name, name) && (f->refs[i].flags & flags) == flags)
			return &f->refs[i];
	return NULL;
}

static const pf_call *call_named(const pyfile *f, const char *fname)
{
	for (int i = 0; i < f->ncalls; i++)
		if (f->calls[i].fname && !strcmp(f->calls[i].fname, fname))
			return &f->calls[i];
	return NULL;
}

static void test_strings_name_definitions(void **state)
{
	(void)state;
	pyfile *f = parse("SCHED = 'pkg.core.scheduler.Scheduler'\n"
	                  "register('p2p', 'pkg.tiers.p2p', 'P2PTier')\n"
	                  "def pick():\n"
	                  "    mod = 'pkg.workers.multi'\n"
	                  "    cls = 'create_worker'\n"
	                  "    return mod, cls\n"
	                  "NOT_A_PATH = 'a b.c'\n");
	const pf_ref *r = ref_with(f, "Scheduler", PF_R_STR);
	assert_non_null(r);
	assert_string_equal(r->obj, "pkg.core.scheduler");
	r = ref_with(f, "P2PTier", PF_R_STR);
	assert_non_null(r);
	assert_string_equal(r->obj, "pkg.tiers.p2p");
	r = ref_with(f, "create_worker", PF_R_STR);
	assert_non_null(r);
	assert_string_equal(r->obj, "pkg.workers.multi");
	assert_int_equal(r->line, 5);
	assert_null(ref_with(f, "c", PF_R_STR)); /* 'a b.c' is no path */
	/* a string is never a plain load (the def-use layer counts only those) */
	for (int i = 0; i < f->nrefs; i++)
		if (!strcmp(f->refs[i].name, "Scheduler"))
			assert_true(f->refs[i].flags & PF_R_STR);
	pyfile_free(f);
}

static void test_star_import_and_getattr(void **state)
{
	(void)state;
	pyfile *f = parse("from .state import *\n"
	                  "def f(cfg):\n"
	                  "    return getattr(cfg, 'block_size', 16)\n");
	int star = 0;
	for (int i = 0; i < f->nimports; i++)
		if (!strcmp(f->imports[i].alias, "*")) {
			star = 1;
			assert_string_equal(f->imports[i].attr, "*");
			assert_string_equal(f->imports[i].module, "pkg.state");
		}
	assert_true(star);
	const pf_ref *r = ref_with(f, "block_size", PF_R_ATTR);
	assert_non_null(r);
	assert_string_equal(r->obj, "cfg");
	pyfile_free(f);
}

/* The condition expression of the first guard. */
static const pf_expr *first_cond(const pyfile *f)
{
	assert_true(f->nguards >= 1);
	assert_true(f->guards[0].cexpr >= 0);
	return &f->exprs[f->guards[0].cexpr];
}

static void test_main_block_and_capability_family(void **state)
{
	(void)state;
	pyfile *f = parse("if __name__ == '__main__':\n    bench()\n");
	assert_int_equal(first_cond(f)->op, PF_X_MAIN);
	pyfile_free(f);
	f = parse("if '__main__' == __name__:\n    bench()\n");
	assert_int_equal(first_cond(f)->op, PF_X_MAIN);
	pyfile_free(f);
	f = parse("if __name__ == 'pkg':\n    bench()\n");
	assert_int_not_equal(first_cond(f)->op, PF_X_MAIN);
	pyfile_free(f);
	f = parse("if current_platform.is_device_capability_family(100):\n    run()\n");
	const pf_expr *x = first_cond(f);
	assert_int_equal(x->op, PF_X_CAP);
	assert_int_equal(x->cap, 100);
	assert_int_equal(x->capop, 'f');
	pyfile_free(f);
}

static int scope_named(const pyfile *f, const char *name)
{
	for (int i = 0; i < f->nscopes; i++)
		if (!strcmp(f->scopes[i].name, name))
			return i;
	fail_msg("no scope %s", name);
	return -1;
}

static void test_classes_that_declare_their_device(void **state)
{
	(void)state;
	pyfile *f = parse("class CpuPlatform(Platform):\n"
	                  "    _enum = PlatformEnum.CPU\n"
	                  "class CudaPlatform(Platform):\n"
	                  "    _enum = PlatformEnum.CUDA\n"
	                  "class RocmExperts:\n"
	                  "    @staticmethod\n"
	                  "    def _supports_current_device():\n"
	                  "        return current_platform.is_rocm() and supports_mx()\n"
	                  "class Plain:\n"
	                  "    def run(self):\n"
	                  "        return 1\n");
	const pf_scope *c = &f->scopes[scope_named(f, "CpuPlatform")];
	assert_true(c->plat_expr >= 0);
	assert_int_equal(f->exprs[c->plat_expr].op, PF_X_PLAT);
	assert_int_equal(f->exprs[c->plat_expr].plat, PF_PLAT_CPU);
	assert_int_equal(c->plat_line, 2);
	c = &f->scopes[scope_named(f, "CudaPlatform")];
	assert_int_equal(f->exprs[c->plat_expr].plat, PF_PLAT_CUDA);
	c = &f->scopes[scope_named(f, "RocmExperts")];
	assert_true(c->plat_expr >= 0);
	assert_int_equal(f->exprs[c->plat_expr].op, PF_X_AND);
	assert_int_equal(c->plat_line, 7);
	assert_int_equal(f->scopes[scope_named(f, "Plain")].plat_expr, -1);
	assert_int_equal(f->scopes[scope_named(f, "run")].plat_expr, -1);
	pyfile_free(f);
}

static void test_setters_and_unconditional_calls(void **state)
{
	(void)state;
	pyfile *f = parse("_ENABLED = True\n"
	                  "def set_enabled(on):\n"
	                  "    global _ENABLED\n"
	                  "    _ENABLED = on\n"
	                  "def maybe(on):\n"
	                  "    global _ENABLED\n"
	                  "    if on:\n"
	                  "        _ENABLED = on\n"
	                  "def start(cfg):\n"
	                  "    set_enabled(cfg)\n"
	                  "    if cfg:\n"
	                  "        later(cfg)\n");
	assert_int_equal(f->ngsets, 2);
	assert_string_equal(f->gsets[0].name, "_ENABLED");
	assert_int_equal(f->gsets[0].line, 4);
	assert_true(f->gsets[0].uncond);
	assert_int_equal(f->gsets[1].line, 8);
	assert_false(f->gsets[1].uncond);
	for (int i = 0; i < f->nasgs; i++) /* a global's store is no local */
		assert_true(strcmp(f->asgs[i].name, "_ENABLED") || f->asgs[i].scope < 0);
	assert_true(call_named(f, "set_enabled")->flags & PF_C_UNCOND);
	assert_false(call_named(f, "later")->flags & PF_C_UNCOND);
	pyfile_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_strings_name_definitions),
	    cmocka_unit_test(test_star_import_and_getattr),
	    cmocka_unit_test(test_main_block_and_capability_family),
	    cmocka_unit_test(test_classes_that_declare_their_device),
	    cmocka_unit_test(test_setters_and_unconditional_calls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
