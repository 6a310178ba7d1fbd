/*
 * decide_text.h — the decision stage's table (decide.h) for a person, as
 * text on a textout's result stream (textout.h). Shared by muh tune (after
 * its rounds) and muh report (under a run's row).
 */
#ifndef MUH_DECIDE_TEXT_H
#define MUH_DECIDE_TEXT_H

#include "muh/decide.h"
#include "muh/objective.h"
#include "muh/textout.h"

#include "muh/api.h"

MUH_BEGIN_DECLS


/* Every variant the stage re-deployed, the baseline first, with its
 * repeats, ok ones, SLOs met (of its ok ones; "-" when the objective has
 * none), metric, ratio to the baseline with its interval, and verdict (the
 * baseline's: its first failure, else its first SLO miss); then the
 * winner line, or "no proven gain" with why. Lines start with lead (tune:
 * "", report: "  "). */
void decide_text_table(const textout *f, const decide_summary *sm, const muh_objective *o, const char *default_key,
		       const char *lead);

/* One line per finalist: its lowest and highest one-round ratio to the
 * baseline and their rounds ("per round   KEY: 0.417x (round 1) to 1.912x
 * (round 7)"; "KEY: 3.000x in every paired round" when the two print
 * alike), so that a round that swung the paired gain is seen. Lines start
 * with lead. Nothing when no finalist has a paired round. */
void decide_text_rounds(const textout *f, const decide_summary *sm, const char *lead);

MUH_END_DECLS

#endif
