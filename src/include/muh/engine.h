/*
 * engine.h — what the engine backend and `muh patch --from` share: the
 * launch file of a variant, made by writing each param's value into the
 * deployment file with deploy_set (deploy.h). The variant that was measured
 * and the file that ships come from this one function.
 */
#ifndef MUH_ENGINE_H
#define MUH_ENGINE_H

#include <stddef.h>

#include "muh/deploy.h"
#include "muh/eval.h"

#include "muh/api.h"

MUH_BEGIN_DECLS

/* The deployment file of target t (target.launch, or target.command read as
 * a command line) with every param of v written into it (a param maps to the
 * argument of its own name, or the one `knobs: {PARAM: ARGUMENT}` names),
 * then, when port > 0, target.port_arg set to port. On success *out is the
 * parsed result (its text is the new file) and MUH_OK is returned; on a
 * refusal (the file does not parse, a value cannot be written) MUH_EINPUT
 * with why (n bytes) naming the argument. */
/* The launch argument param is written into: its own name, or the one the
 * spec's `knobs: {PARAM: ARGUMENT}` names. */
const char *engine_arg_name(const muh_target *t, const char *param);

/* The text value v is written as into argument arg of f: 0/1 on a boolean
 * flag (in the file or its schema) become False/True, anything else as
 * value_fmt writes it. */
void engine_value_text(const deploy_file *f, const char *arg, muh_value v, char *buf, size_t n);

int engine_launch_text(const muh_target *t, const muh_variant *v, int port, deploy_file **out, char *why,
		       size_t n);

MUH_END_DECLS

#endif
