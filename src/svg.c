/*
 * svg.c — SVG plots (see svg.h). Owns layout and escaping only; callers own
 * the data. Must never emit text unescaped: series names come from specs.
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

static const char *const colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
				     "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

void svg_escape(FILE *f, const char *t)
{
	for (; t && *t; t++) {
		switch (*t) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		default:
			/* control characters are not allowed in XML 1.0 */
			fputc((unsigned char)*t < 0x20 && *t != '\t' && *t != '\n' ? ' ' : *t, f);
		}
	}
}

static void header(FILE *f, const char *title, const char *xlabel, const char *ylabel)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		   "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
		W, H, W, H);
	fprintf(f, "<text x=\"%d\" y=\"24\" font-size=\"15\">", ML);
	svg_escape(f, title);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">", ML + (W - ML - MR) / 2,
		H - 14);
	svg_escape(f, xlabel);
	fprintf(f, "</text>\n<text x=\"18\" y=\"%d\" text-anchor=\"middle\" "
		   "transform=\"rotate(-90 18 %d)\">",
		MT + (H - MT - MB) / 2, MT + (H - MT - MB) / 2);
	svg_escape(f, ylabel);
	fprintf(f, "</text>\n<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		   "stroke=\"#444\"/>\n",
		ML, MT, W - ML - MR, H - MT - MB);
}

/* Five ticks on an axis from lo to hi; vertical when y. */
static void ticks(FILE *f, double lo, double hi, int y, int logy)
{
	for (int i = 0; i <= 4; i++) {
		double frac = i / 4.0;
		double v = lo + (hi - lo) * frac;
		if (logy)
			v = pow(10, v);
		if (y) {
			double py = H - MB - frac * (H - MT - MB);
			fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
				   "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.4g</text>\n",
				ML, py, W - MR, py, ML - 6, py + 4, v);
		} else {
			double px = ML + frac * (W - ML - MR);
			fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.4g</text>\n", px,
				H - MB + 18, v);
		}
	}
}

void svg_lines(FILE *f, const char *title, const char *xlabel, const char *ylabel,
	       const svg_series *s, size_t ns, int log_y)
{
	double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
	for (size_t k = 0; k < ns; k++)
		for (size_t i = 0; i < s[k].n; i++) {
			double x = s[k].x[i], y = s[k].y[i];
			if (!isfinite(x) || !isfinite(y) || (log_y && y <= 0))
				continue;
			if (log_y)
				y = log10(y);
			x0 = fmin(x0, x), x1 = fmax(x1, x), y0 = fmin(y0, y), y1 = fmax(y1, y);
		}
	if (!isfinite(x0)) {
		x0 = 0, x1 = 1, y0 = 0, y1 = 1;
	}
	if (x1 == x0)
		x1 = x0 + 1;
	if (y1 == y0) {
		y0 -= 0.5;
		y1 += 0.5;
	}
	header(f, title, xlabel, ylabel);
	ticks(f, x0, x1, 0, 0);
	ticks(f, y0, y1, 1, log_y);
	for (size_t k = 0; k < ns; k++) {
		const char *c = colors[k % 10];
		fprintf(f, "<g class=\"series\" data-name=\"");
		svg_escape(f, s[k].name);
		fprintf(f, "\">\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" points=\"", c);
		for (size_t i = 0; i < s[k].n; i++) {
			double x = s[k].x[i], y = s[k].y[i];
			if (!isfinite(x) || !isfinite(y) || (log_y && y <= 0))
				continue;
			if (log_y)
				y = log10(y);
			fprintf(f, "%.1f,%.1f ", ML + (x - x0) / (x1 - x0) * (W - ML - MR),
				H - MB - (y - y0) / (y1 - y0) * (H - MT - MB));
		}
		fprintf(f, "\"/>\n<rect x=\"%d\" y=\"%zu\" width=\"12\" height=\"12\" fill=\"%s\"/>"
			   "<text x=\"%d\" y=\"%zu\">",
			W - MR + 10, MT + 4 + k * 18, c, W - MR + 28, MT + 14 + k * 18);
		svg_escape(f, s[k].name);
		fprintf(f, "</text>\n</g>\n");
	}
	fprintf(f, "</svg>\n");
}

void svg_histogram(FILE *f, const char *title, const char *xlabel, const double *v, size_t n,
		   int nbins)
{
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]))
			lo = fmin(lo, v[i]), hi = fmax(hi, v[i]);
	if (!isfinite(lo))
		lo = 0, hi = 1;
	if (hi == lo)
		hi = lo + 1;
	if (nbins < 1)
		nbins = 1;
	if (nbins > 200)
		nbins = 200;
	size_t count[200] = {0}, top = 1;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			continue;
		int b = (int)((v[i] - lo) / (hi - lo) * nbins);
		if (b >= nbins)
			b = nbins - 1;
		if (++count[b] > top)
			top = count[b];
	}
	header(f, title, xlabel, "configurations");
	ticks(f, lo, hi, 0, 0);
	ticks(f, 0, (double)top, 1, 0);
	double bw = (double)(W - ML - MR) / nbins;
	fprintf(f, "<g class=\"series\" data-name=\"histogram\">\n");
	for (int b = 0; b < nbins; b++) {
		double h = (double)count[b] / (double)top * (H - MT - MB);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n",
			ML + b * bw, H - MB - h, bw > 1 ? bw - 1 : bw, h, colors[0]);
	}
	fprintf(f, "</g>\n</svg>\n");
}
