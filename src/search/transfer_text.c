/*
 * transfer_text.c — muh transfer's report for a person (transfer.h's
 * transfer_text), moved here from the muh program: per run, where it was
 * measured, its top configs with their verdict on the target and why, and
 * the checks the target's profile could not answer (once each). Only
 * rendering; the checks are transfer.c's.
 */
#include <stdio.h>
#include <string.h>

#include "muh/transfer.h"

void transfer_text(const textout *o, const char *db, const transfer_report *r)
{
	textout_printf(o, TEXTOUT_RESULT, "transfer    %s -> %s%s%s%s\n", db, r->target.name,
	               r->target.device[0] ? " (" : "", r->target.device,
	               r->target.device[0] ? ")" : "");
	textout_printf(o, TEXTOUT_RESULT, "            %s\n", r->target.source);
	for (size_t i = 0; i < r->nruns; i++) {
		const transfer_run *t = &r->runs[i];
		textout_printf(o, TEXTOUT_RESULT, "\nrun %lld  %s  %s\n", (long long)t->id,
		               t->spec_path, t->problem);
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "  measured on %s%s; %zu ok, top %zu checked, %zu valid on %s\n",
		    t->measured_on,
		    t->other_device
		        ? " (another device: these times were not measured on the target)"
		        : "",
		    t->nok, t->n, t->nvalid, r->target.name);
		if (t->spec_note)
			textout_printf(o, TEXTOUT_RESULT, "  note: %s\n", t->spec_note);
		if (!t->n)
			continue;
		textout_printf(o, TEXTOUT_RESULT, "  %6s %6s  %-11s %-8s %s\n", "target", "source",
		               "time", "verdict", "config");
		for (size_t k = 0; k < t->n; k++) {
			const transfer_entry *e = &t->e[k];
			char tr[16], tm[32];
			snprintf(tr, sizeof(tr), e->target_rank ? "%d" : "-", e->target_rank);
			text_time(tm, sizeof(tm), e->time_s);
			textout_printf(o, TEXTOUT_RESULT, "  %6s %6d  %-11s %-8s %s\n", tr,
			               e->source_rank, tm,
			               e->verdict == TRANSFER_VALID ? "valid" : "invalid", e->key);
			for (size_t w = 0; w < e->nwhy; w++)
				textout_printf(o, TEXTOUT_RESULT, "  %6s %6s  %-11s %-8s why: %s\n",
				               "", "", "", "", e->why[w]);
		}
		/* notes that every entry shares are printed once */
		for (size_t k = 0; k < t->n; k++) {
			const transfer_entry *e = &t->e[k];
			for (size_t w = 0; w < e->nnotes; w++) {
				int seen = 0;
				for (size_t j = 0; j < k && !seen; j++)
					for (size_t x = 0; x < t->e[j].nnotes && !seen; x++)
						seen = !strcmp(t->e[j].notes[x], e->notes[w]);
				for (size_t x = 0; x < w && !seen; x++)
					seen = !strcmp(e->notes[x], e->notes[w]);
				if (!seen)
					textout_printf(o, TEXTOUT_RESULT, "  not checked: %s\n",
					               e->notes[w]);
			}
		}
	}
}
