/*
 * svg.h — small, dependency-free SVG plots for reports and benchmarks:
 * line plots of several series (best-so-far against evaluations) and
 * histograms (time distributions). The output is standalone, valid XML.
 *
 * What a reader is promised: a count axis has integer ticks only; the title
 * fits the width (smaller font, then an ellipsis); a value axis whose
 * positive values span more than 10x is log10 (svg_axes.log = SVG_LOG_AUTO).
 */
#ifndef MUH_SVG_H
#define MUH_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "muh/api.h"

MUH_BEGIN_DECLS

typedef struct svg_series {
	const char *name; /* legend text (escaped on output) */
	const double *x, *y;
	size_t n;
} svg_series;

/* A mark on a line plot, in a <g class="mark" data-name=NAME>: a horizontal
 * line at y when x is NAN (a reference such as the default's value), else a
 * point marker at (x, y). label is drawn beside it (escaped). */
typedef struct svg_mark {
	const char *name, *label;
	double x, y;
} svg_mark;

enum { SVG_LOG_OFF = 0, SVG_LOG_ON = 1, SVG_LOG_AUTO = 2 };

/* A plot's text and axes. x_count: x is a count (integer ticks). log: for
 * the value axis (y of a line plot, x of a histogram), SVG_LOG_*. */
typedef struct svg_axes {
	const char *title, *xlabel, *ylabel;
	int x_count;
	int log;
} svg_axes;

/* The estimated width in pixels of text at font size px (0.6 em a
 * character, generous for sans-serif), the measure the title is fitted by. */
double svg_text_width(const char *text, double px);

/* Writes a line plot of the series and marks to f: title, axis labels,
 * ticks, legend. Non-finite points are skipped; so are y <= 0 on a log axis. */
void svg_lines(FILE *f, const svg_axes *a, const svg_series *s, size_t ns, const svg_mark *m,
	       size_t nm);

/* Writes a histogram of v[0..n) with nbins bins to f; the y axis is the
 * count of values in a bin (integer ticks). On a log axis the bins are
 * equal in log10 and values <= 0 are left out. */
void svg_histogram(FILE *f, const svg_axes *a, const double *v, size_t n, int nbins);

/* Writes text to f with XML's five special characters escaped. */
void svg_escape(FILE *f, const char *text);

MUH_END_DECLS

#endif
