/*
 * svg.h — small, dependency-free SVG plots for reports and benchmarks:
 * line plots of several series (best-so-far against evaluations) and
 * histograms (time distributions). The output is standalone, valid XML.
 */
#ifndef MUH_SVG_H
#define MUH_SVG_H

#include <stddef.h>
#include <stdio.h>

typedef struct svg_series {
	const char *name; /* legend text (escaped on output) */
	const double *x, *y;
	size_t n;
} svg_series;

/* Writes a line plot of the series to f: title, axis labels, ticks, legend.
 * Non-finite points are skipped. log_y plots y on a log10 axis (y > 0). */
void svg_lines(FILE *f, const char *title, const char *xlabel, const char *ylabel,
	       const svg_series *s, size_t ns, int log_y);

/* Writes a histogram of v[0..n) with nbins bins to f. */
void svg_histogram(FILE *f, const char *title, const char *xlabel, const double *v, size_t n,
		   int nbins);

/* Writes text to f with XML's five special characters escaped. */
void svg_escape(FILE *f, const char *text);

#endif
