/*
 * overlay_int.h — engine-tree overlays for the evaluator (not installed).
 * See src/eval/overlay.c.
 */
#ifndef MUH_OVERLAY_INT_H
#define MUH_OVERLAY_INT_H

#include "eval_int.h"

/* Hands ev the overlay maker of target t when t measures through an
 * engine tree (target.engine_tree); nothing otherwise. MUH_OK or
 * MUH_ENOMEM. The session and the pool's workers call it after eval_open. */
int overlay_attach(muh_evaluator *ev, const muh_target *t);

#endif
