/*
 * svg.c — SVG plots (see svg.h). Owns layout and escaping only; callers own
 * the data. Must never emit text unescaped: series names come from specs.
 * Must never label a count axis with a fraction, nor let the title run past
 * the width.
 */
#include <math.h>
#include <string.h>

#include "muh/svg.h"

#define W 720
#define H 420
#define ML 80 /* margins */
#define MR 170
#define MT 40
#define MB 56
#define TITLE_X 12
#define TITLE_PX 15.0
#define TITLE_MIN_PX 10.0
#define MAXTICKS 32

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
				     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

void svg_escape(FILE *f, const char *t)
{
	static const char special[] = "<>&\"'";
	static const char *const entity[] = {"&lt;", "&gt;", "&amp;", "&quot;", "&apos;"};
	for (; t && *t; t++) {
		const char *sp = strchr(special, *t);
		if (sp)
			fputs(entity[sp - special], f);
		else /* control characters are not allowed in XML 1.0 */
			fputc((unsigned char)*t < 0x20 && *t != '\t' && *t != '\n' ? ' ' : *t, f);
	}
}

/* UTF-8 characters in t (continuation bytes not counted). */
static size_t utf8_len(const char *t)
{
	size_t n = 0;
	for (; t && *t; t++)
		n += ((unsigned char)*t & 0xC0) != 0x80;
	return n;
}

double svg_text_width(const char *text, double px)
{
	return (double)utf8_len(text) * 0.6 * px;
}

/* The title at the largest size from TITLE_PX down to TITLE_MIN_PX that
 * fits; at the smallest, cut at a character boundary with an ellipsis. */
static void title(FILE *f, const char *t)
{
	double avail = W - 2 * TITLE_X, px = TITLE_PX;
	while (px > TITLE_MIN_PX && svg_text_width(t, px) > avail)
		px -= 0.5;
	fprintf(f, "<text class=\"title\" x=\"%d\" y=\"24\" font-size=\"%.1f\">", TITLE_X, px);
	if (svg_text_width(t, px) <= avail) {
		svg_escape(f, t);
	} else {
		size_t keep = (size_t)(avail / (0.6 * px)) - 1, chars = 0, i = 0;
		for (; t[i]; i++) {
			if (((unsigned char)t[i] & 0xC0) != 0x80 && chars++ == keep)
				break;
		}
		char buf[1024];
		if (i >= sizeof(buf))
			i = sizeof(buf) - 1;
		while (i && ((unsigned char)t[i] & 0xC0) == 0x80)
			i--; /* never half a character */
		memcpy(buf, t, i);
		buf[i] = '\0';
		svg_escape(f, buf);
		fputs("\xE2\x80\xA6", f); /* … */
	}
	fputs("</text>\n", f);
}

static void header(FILE *f, const svg_axes *a)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, H, W, H);
	title(f, a->title);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", ML + (W - ML - MR) / 2, H - 14);
	svg_escape(f, a->xlabel);
	fprintf(f, "</text>\n<text x=\"18\" y=\"%d\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 18 %d)\">",
		MT + (H - MT - MB) / 2, MT + (H - MT - MB) / 2);
	svg_escape(f, a->ylabel);
	fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		   "stroke=\"#444\"/>\n",
		ML, MT, W - ML - MR, H - MT - MB);
}

/* One axis: [lo, hi] in plotted units (log10 of the value when log). */
struct axis {
	double lo, hi;
	int log, count;
};

static int plotted(const struct axis *x, double v)
{
	return isfinite(v) && (!x->log || v > 0);
}

static double tf(const struct axis *x, double v)
{
	return x->log ? log10(v) : v;
}

static double frac(const struct axis *x, double v)
{
	return (tf(x, v) - x->lo) / (x->hi - x->lo);
}

static double px_x(const struct axis *x, double v)
{
	return ML + frac(x, v) * (W - ML - MR);
}

static double px_y(const struct axis *y, double v)
{
	return H - MB - frac(y, v) * (H - MT - MB);
}

/* Whether the values want a log axis: mode SVG_LOG_AUTO asks for all finite
 * values positive and max/min > 10. */
static int want_log(int mode, double min, double max)
{
	if (mode != SVG_LOG_AUTO)
		return mode == SVG_LOG_ON;
	return isfinite(min) && min > 0 && max / min > 10;
}

/* Grows the axis' range to take v. */
static void take(struct axis *x, double v)
{
	if (!plotted(x, v))
		return;
	v = tf(x, v);
	x->lo = fmin(x->lo, v);
	x->hi = fmax(x->hi, v);
}

/* Closes the range: a default when empty, a width when one point. */
static void settle(struct axis *x, double pad)
{
	if (!isfinite(x->lo))
		x->lo = 0, x->hi = 1;
	if (x->hi == x->lo) {
		if (x->count)
			x->hi = x->lo + 1;
		else
			x->lo -= 0.5, x->hi += 0.5;
	}
	double span = x->hi - x->lo;
	x->lo -= pad * span;
	x->hi += pad * span;
}

/* Tick values (not plotted units) into t, at most MAXTICKS: on a log axis
 * the powers of ten (and 2x, 5x when there are few); else multiples of a
 * 1-2-5 step, never below 1 on a count axis. */
static size_t tick_values(const struct axis *x, double *t)
{
	size_t n = 0;
	if (x->log) {
		static const double mult[] = {1, 2, 5};
		for (int pass = 0; pass < 2 && n < 3; pass++) {
			n = 0;
			for (double k = floor(x->lo); k <= ceil(x->hi) && n < MAXTICKS; k++)
				for (int m = 0; m < (pass ? 3 : 1) && n < MAXTICKS; m++) {
					double v = mult[m] * pow(10, k), l = log10(v);
					if (l >= x->lo - 1e-9 && l <= x->hi + 1e-9)
						t[n++] = v;
				}
		}
		return n;
	}
	double raw = (x->hi - x->lo) / 5, mag = pow(10, floor(log10(raw))), r = raw / mag;
	double step = (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * mag;
	if (x->count && step < 1)
		step = 1;
	for (double k = ceil(x->lo / step - 1e-9); k <= floor(x->hi / step + 1e-9) && n < MAXTICKS; k++)
		t[n++] = fabs(k) < 0.5 ? 0 : k * step;
	return n;
}

static void tick_label(char *buf, size_t n, const struct axis *x, double v)
{
	if (x->count || (x->log && v >= 1 && v < 1e7))
		snprintf(buf, n, "%.0f", v); /* 10000, not 1e+04 */
	else
		snprintf(buf, n, "%.4g", v);
}

/* Ticks and labels on an axis; vertical when y (with grid lines). */
static void ticks(FILE *f, const struct axis *x, int y)
{
	double t[MAXTICKS];
	size_t n = tick_values(x, t);
	fprintf(f, "<g class=\"%s-ticks\"%s>\n", y ? "y" : "x", x->log ? " data-scale=\"log\"" : "");
	for (size_t i = 0; i < n; i++) {
		char lab[64];
		tick_label(lab, sizeof(lab), x, t[i]);
		if (y) {
			double py = px_y(x, t[i]);
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
				   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
				ML, py, W - MR, py, ML - 6, py + 4, lab);
		} else {
			double px = px_x(x, t[i]);
			fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#444\"/>"
				   "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>\n",
				px, H - MB, px, H - MB + 5, px, H - MB + 18, lab);
		}
	}
	fprintf(f, "</g>\n");
}

static void legend_text(FILE *f, size_t row, const char *name)
{
	fprintf(f, "<text x=\"%d\" y=\"%zu\">", W - MR + 28, MT + 14 + row * 18);
	svg_escape(f, name);
	fprintf(f, "</text>\n");
}

static void mark(FILE *f, const struct axis *xa, const struct axis *ya, const svg_mark *m,
		 size_t row)
{
	fprintf(f, "<g class=\"mark\" data-name=\"");
	svg_escape(f, m->name);
	fprintf(f, "\">\n");
	double py = px_y(ya, m->y);
	size_t ly = MT + 4 + row * 18;
	if (isnan(m->x)) {
		fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#555\" "
			   "stroke-dasharray=\"6 4\"/>\n<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" "
			   "fill=\"#333\">",
			ML, py, W - MR, py, W - MR - 4, py > MT + 16 ? py - 4 : py + 14);
		svg_escape(f, m->label);
		fprintf(f, "</text>\n<line x1=\"%d\" y1=\"%zu\" x2=\"%d\" y2=\"%zu\" stroke=\"#555\" "
			   "stroke-dasharray=\"6 4\"/>\n",
			W - MR + 8, ly + 6, W - MR + 22, ly + 6);
	} else {
		double px = px_x(xa, m->x);
		int right = px > ML + (W - ML - MR) / 2;
		fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"none\" stroke=\"%s\" "
			   "stroke-width=\"2\"/>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
			   "fill=\"%s\">",
			px, py, colors[1], right ? px - 8 : px + 8, py > MT + 30 ? py - 10 : py + 20,
			right ? "end" : "start", colors[1]);
		svg_escape(f, m->label);
		fprintf(f, "</text>\n<circle cx=\"%d\" cy=\"%zu\" r=\"5\" fill=\"none\" stroke=\"%s\" "
			   "stroke-width=\"2\"/>\n",
			W - MR + 15, ly + 6, colors[1]);
	}
	legend_text(f, row, m->name);
	fprintf(f, "</g>\n");
}

void svg_lines(FILE *f, const svg_axes *a, const svg_series *s, size_t ns, const svg_mark *m,
	       size_t nm)
{
	struct axis xa = {INFINITY, -INFINITY, 0, a->x_count};
	struct axis ya = {INFINITY, -INFINITY, 0, 0};
	double ymin = INFINITY, ymax = -INFINITY;
	for (size_t k = 0; k < ns; k++)
		for (size_t i = 0; i < s[k].n; i++)
			if (isfinite(s[k].x[i]) && isfinite(s[k].y[i]))
				ymin = fmin(ymin, s[k].y[i]), ymax = fmax(ymax, s[k].y[i]);
	for (size_t k = 0; k < nm; k++)
		if (isfinite(m[k].y))
			ymin = fmin(ymin, m[k].y), ymax = fmax(ymax, m[k].y);
	ya.log = want_log(a->log, ymin, ymax);
	for (size_t k = 0; k < ns; k++)
		for (size_t i = 0; i < s[k].n; i++)
			if (plotted(&ya, s[k].y[i]) && isfinite(s[k].x[i]))
				take(&xa, s[k].x[i]), take(&ya, s[k].y[i]);
	for (size_t k = 0; k < nm; k++)
		if (plotted(&ya, m[k].y)) {
			take(&ya, m[k].y);
			take(&xa, m[k].x);
		}
	settle(&xa, 0);
	settle(&ya, 0.05);
	header(f, a);
	ticks(f, &xa, 0);
	ticks(f, &ya, 1);
	for (size_t k = 0; k < ns; k++) {
		const char *c = colors[k % 10];
		fprintf(f, "<g class=\"series\" data-name=\"");
		svg_escape(f, s[k].name);
		fprintf(f, "\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", c);
		for (size_t i = 0; i < s[k].n; i++)
			if (plotted(&ya, s[k].y[i]) && isfinite(s[k].x[i]))
				fprintf(f, "%.1f,%.1f ", px_x(&xa, s[k].x[i]), px_y(&ya, s[k].y[i]));
		fprintf(f, "\"/>\n<rect x=\"%d\" y=\"%zu\" width=\"12\" height=\"12\" fill=\"%s\"/>",
			W - MR + 10, MT + 4 + k * 18, c);
		legend_text(f, k, s[k].name);
		fprintf(f, "</g>\n");
	}
	for (size_t k = 0; k < nm; k++)
		if (plotted(&ya, m[k].y))
			mark(f, &xa, &ya, &m[k], ns + k);
	fprintf(f, "</svg>\n");
}

void svg_histogram(FILE *f, const svg_axes *a, const double *v, size_t n, int nbins)
{
	struct axis xa = {INFINITY, -INFINITY, 0, a->x_count};
	double vmin = INFINITY, vmax = -INFINITY;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			vmin = fmin(vmin, v[i]), vmax = fmax(vmax, v[i]);
	xa.log = want_log(a->log, vmin, vmax);
	for (size_t i = 0; i < n; i++)
		take(&xa, v[i]);
	settle(&xa, 0);
	if (nbins < 1)
		nbins = 1;
	if (nbins > 200)
		nbins = 200;
	size_t count[200] = {0}, top = 1;
	for (size_t i = 0; i < n; i++) {
		if (!plotted(&xa, v[i]))
			continue;
		int b = (int)(frac(&xa, v[i]) * nbins);
		if (b >= nbins)
			b = nbins - 1;
		if (b < 0)
			b = 0;
		if (++count[b] > top)
			top = count[b];
	}
	struct axis ya = {0, (double)top, 0, 1};
	header(f, a);
	ticks(f, &xa, 0);
	ticks(f, &ya, 1);
	double bw = (double)(W - ML - MR) / nbins;
	fprintf(f, "<g class=\"series\" data-name=\"histogram\">\n");
	for (int b = 0; b < nbins; b++) {
		double h = (double)count[b] / (double)top * (H - MT - MB);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
			ML + b * bw, H - MB - h, bw > 1 ? bw - 1 : bw, h, colors[0]);
	}
	fprintf(f, "</g>\n</svg>\n");
}
