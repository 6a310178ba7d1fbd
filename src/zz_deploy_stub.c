/* TEMPORARY (removed once src/deploy.c lands): weak stand-ins so that the
 * tree links while deploy.c is being written. */
#include <stddef.h>
#include "muh/deploy.h"
#include "muh/muh.h"
__attribute__((weak)) int deploy_load(const char *path, const deploy_schema *sc, deploy_file **out, muh_diag *d)
{ *out = NULL; return diag_errorf(d, "deployment files are not built yet"); }
__attribute__((weak)) int deploy_parse(const char *path, const char *text, size_t len, const deploy_schema *sc, deploy_file **out, muh_diag *d)
{ *out = NULL; return diag_errorf(d, "deployment files are not built yet"); }
__attribute__((weak)) void deploy_free(deploy_file *f) {}
__attribute__((weak)) const deploy_arg *deploy_find(const deploy_file *f, const char *name) { return NULL; }
__attribute__((weak)) int deploy_set(const deploy_file *f, const char *name, const char *value, char **text, size_t *len, muh_diag *d)
{ return diag_errorf(d, "deployment files are not built yet"); }
