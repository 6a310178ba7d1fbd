/* backend_command.c — placeholder until the real backend lands. */
#include "muh/eval.h"
#include "muh/muh.h"
static int stub_open(eval_ctx *c, muh_diag *d) { (void)c; snprintf(d->msg, sizeof(d->msg), "backend command: not built"); return MUH_EENV; }
const eval_backend backend_command = { .name = "command", .open = stub_open };
