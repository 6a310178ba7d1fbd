/*
 * muh.h — the umbrella of libmuh's internal headers, and the conventions every
 * module shares. The public API is include/muh/libmuh.h (docs/design.md).
 *
 * Error convention (one for the whole library): functions return an int status
 * from enum muh_status (libmuh.h); 0 is success. Anything a user wrote that
 * is wrong is described in a struct muh_diag (diag.h) that the caller prints.
 * At the public boundary (src/api.c) the same status comes back and the
 * diag's text is muh_last_error(). The library never prints and never
 * exits; the CLI does both.
 *
 * Exit codes of the CLI follow the same numbers: 0 ok, 1 findings or a
 * shortfall, 2 usage or input error, 3 environment error (e.g. no device).
 */
#ifndef MUH_MUH_H
#define MUH_MUH_H

#include "muh/api.h"
#include "muh/libmuh.h"

MUH_BEGIN_DECLS

#define MUH_VERSION "0.1.0"

/* enum muh_status (MUH_OK, MUH_EFINDING, MUH_EINPUT, MUH_EENV, MUH_ENOMEM)
 * is the public header's: one status type inside libmuh and at its boundary. */

#include "muh/diag.h"
#include "muh/value.h"
#include "muh/expr.h"
#include "muh/hw.h"
#include "muh/spec.h"
#include "muh/space.h"

MUH_END_DECLS

#endif
