/*
 * muh.h — the umbrella header of libmuh, and the conventions every module shares.
 *
 * Error convention (one for the whole library): functions return an int status
 * from enum muh_status; 0 is success. Anything a user wrote that is wrong is
 * described in a struct muh_diag (diag.h) that the caller prints. The library
 * never prints and never exits; the CLI does both.
 *
 * Exit codes of the CLI follow the same numbers: 0 ok, 1 findings or a
 * shortfall, 2 usage or input error, 3 environment error (e.g. no device).
 */
#ifndef MUH_MUH_H
#define MUH_MUH_H

#include "muh/api.h"

MUH_BEGIN_DECLS

#define MUH_VERSION "0.1.0"

enum muh_status {
	MUH_OK = 0,
	MUH_EFINDING = 1, /* ran fine, but found something (dead knob, shortfall) */
	MUH_EINPUT = 2,   /* usage or input error; a muh_diag says where */
	MUH_EENV = 3,     /* environment error: no device, missing library, I/O */
	MUH_ENOMEM = 4,   /* allocation failed; the CLI maps it to exit 3 */
};

#include "muh/diag.h"
#include "muh/value.h"
#include "muh/expr.h"
#include "muh/hw.h"
#include "muh/spec.h"
#include "muh/space.h"

MUH_END_DECLS

#endif
