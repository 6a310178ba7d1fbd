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
		/* the problem when the run has one: no trailing blanks for an empty one */
		textout_printf(o, TEXTOUT_RESULT, "\nrun %lld  %s%s%s\n", (long long)t->id,
		               t->spec_path, t->problem[0] ? "  " : "", t->problem);
		/* counts as every count muh prints: 1,305 */
		char nok[32], nn[32], nvalid[32];
		textout_printf(
		    o, TEXTOUT_RESULT,
		    "  measured on %s%s; %s ok, top %s checked, %s valid on %s\n",
		    t->measured_on,
		    t->other_device
		        ? " (another device: these times were not measured on the target)"
		        : "",
		    text_count(nok, sizeof(nok), (double)t->nok), text_count(nn, sizeof(nn), (double)t->n),
		    text_count(nvalid, sizeof(nvalid), (double)t->nvalid), r->target.name);
		if (t->spec_note)
			textout_printf(o, TEXTOUT_RESULT, "  note: %s\n", t->spec_note);
		if (!t->n)
			continue;
		textout_printf(o, TEXTOUT_RESULT, "  %6s %6s  %-11s %-8s %s\n", "target", "source",
		               "time", "verdict", "config");
		for (size_t k = 0; k < t->n; k++) {
			const transfer_entry *e = &t->e[k];
			char tr[32], sr[32], tm[32];
			text_count(sr, sizeof(sr), e->source_rank);
			if (e->target_rank)
				text_count(tr, sizeof(tr), e->target_rank);
			else
				snprintf(tr, sizeof(tr), "-");
			text_time(tm, sizeof(tm), e->time_s);
			textout_printf(o, TEXTOUT_RESULT, "  %6s %6s  %-11s %-8s %s\n", tr, sr, tm,
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
