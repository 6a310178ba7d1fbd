/*
 * muh_kernel.h — the harness ABI of muh's cpu backend (docs/evaluator.md, "cpu").
 *
 * A cpu kernel is one C file, compiled by muh with the variant's params and
 * problem symbols as -D defines into a shared object. It exports:
 *
 *   int  muh_setup(struct muh_args *a);     required: declare buffers
 *   void muh_run(struct muh_args *a);       required: the timed entry point
 *                                           (another name via target.entry)
 *   void muh_reference(struct muh_args *a); optional: reference implementation
 *   void muh_teardown(struct muh_args *a);  optional: free a->user
 *
 * muh_setup fills a->nbufs and a->buf[i].{name,dtype,role,count}; it returns
 * 0, or nonzero when this variant cannot run (the variant is then "invalid",
 * with a->error as the reason). The harness allocates the buffers (64-byte
 * aligned), fills inputs with fresh uniform random values in [-1, 1] (ints in
 * [-8, 8]) for every check, and poisons outputs (NaN, or 0xDEADBEEF words)
 * before every run, so an element the kernel never writes fails the check.
 * muh_run and muh_reference read a->buf[i].data. Params are macros; give
 * each a default with #ifndef so the file also compiles alone.
 */
#ifndef MUH_KERNEL_H
#define MUH_KERNEL_H

#include <stddef.h>

#define MUH_ABI_VERSION 1
#define MUH_MAX_BUFS 8

enum muh_dtype { MUH_F32 = 0, MUH_F64 = 1, MUH_I32 = 2, MUH_I64 = 3 };
enum muh_role { MUH_IN = 0, MUH_OUT = 1, MUH_INOUT = 2 };

struct muh_buf {
	const char *name;
	int dtype;    /* enum muh_dtype */
	int role;     /* enum muh_role */
	size_t count; /* elements */
	void *data;   /* set by the harness */
};

struct muh_args {
	int abi;   /* MUH_ABI_VERSION, set by the harness */
	int nbufs; /* set by muh_setup */
	struct muh_buf buf[MUH_MAX_BUFS];
	void *user;       /* the kernel's own state, if any */
	char error[256];  /* why muh_setup refused */
};

int muh_setup(struct muh_args *a);
void muh_run(struct muh_args *a);
void muh_reference(struct muh_args *a);
void muh_teardown(struct muh_args *a);

#endif
