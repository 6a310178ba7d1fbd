/*
 * fault.c — a kernel that faults on purpose, one fault per value of FAULT:
 *   0 none (a correct vector add)   1 segfault (write through NULL)
 *   2 infinite loop                 3 abort()
 *   4 out of memory (allocate and touch until malloc fails, then use NULL)
 *   5 stack overflow (unbounded recursion)
 *   6 exit(7) from inside the kernel
 * The fault happens in muh_run, so the harness meets it in verify or time.
 */
#include <stdlib.h>
#include <string.h>

#include "muh_kernel.h"

#ifndef FAULT
#define FAULT 0
#endif
#define LEN 4096

int muh_setup(struct muh_args *a)
{
	a->nbufs = 3;
	a->buf[0] = (struct muh_buf){.name = "x", .dtype = MUH_F32, .role = MUH_IN, .count = LEN};
	a->buf[1] = (struct muh_buf){.name = "y", .dtype = MUH_F32, .role = MUH_IN, .count = LEN};
	a->buf[2] = (struct muh_buf){.name = "z", .dtype = MUH_F32, .role = MUH_OUT, .count = LEN};
	return 0;
}

static volatile int sink;

static int recurse(int n)
{
	volatile char pad[4096];
	pad[0] = (char)n;
	return recurse(n + 1) + pad[0];
}

void muh_run(struct muh_args *a)
{
	const float *x = a->buf[0].data, *y = a->buf[1].data;
	float *z = a->buf[2].data;
	if (FAULT == 1) {
		volatile float *p = NULL;
		*p = 1.0f;
	} else if (FAULT == 2) {
		for (;;)
			sink++;
	} else if (FAULT == 3) {
		abort();
	} else if (FAULT == 4) {
		for (;;) {
			char *p = malloc(64 << 20);
			if (!p) {
				volatile char *q = NULL;
				*q = 1;
			} else {
				memset(p, 1, 4096); /* RLIMIT_AS limits address space; touch little */
			}
		}
	} else if (FAULT == 5) {
		sink = recurse(0);
	} else if (FAULT == 6) {
		exit(7);
	}
	for (int i = 0; i < LEN; i++)
		z[i] = x[i] + y[i];
}

void muh_reference(struct muh_args *a)
{
	const float *x = a->buf[0].data, *y = a->buf[1].data;
	float *z = a->buf[2].data;
	for (int i = 0; i < LEN; i++)
		z[i] = x[i] + y[i];
}
