// SPDX-License-Identifier: MIT
/*
 * A timeline drawn: a static SVG, and a self-contained HTML page around the
 * same SVG with the buckets inline for hover and zoom (timeline_export.h).
 *
 * Each pixel column of the plot shows the smallest and largest value of the
 * buckets it overlaps (timeline_range), so a spike narrower than a column
 * still reaches its height: the plotted maximum is the timeline's maximum.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "json.h"
#include "timeline_export.h"
#include "units.h"

#define PLOT_W 960
#define LEFT 80
#define TOP 48          /* the title, then the marks' labels above the data */
#define COLS 860        /* PLOT_W - LEFT - 20 */
#define ROWS 316
#define LEGEND_Y (TOP + ROWS + 58)      /* the legend: below the axes, outside the data */
#define LEGEND_ROW 16
#define LEGEND_ROWS 5   /* what each drawn thing means; the holders' lines beside */
#define PLOT_H (LEGEND_Y + LEGEND_ROWS * LEGEND_ROW + 6)
#define MARK_LABELS_MAX 12      /* more window marks than this go unlabelled (-i 10ms) */
#define MARK_LABEL_GAP 56       /* a mark's name shows this far from the last one shown */
#define PEAK_COLOR "#e00000"    /* only the marker and its legend entry (tests find it) */
/* The holders' lines: none of them red. */
static const char *const holder_color[TL_TOP] = { "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf" };

struct plot {
	const struct timeline *t;
	uint64_t span_ns;               /* the x axis: every bucket */
	int64_t ymax;                   /* the y axis' top, in units */
	int64_t lo[COLS], hi[COLS];     /* each column's min and max */
	int64_t plotted_max;
	uint64_t peak_ns;               /* since the start */
	int64_t peak;
	bool has_peak;
	struct tl_ticks ticks;          /* the y axis: round steps of a unit */
	const struct tl_track *top[TL_TOP];     /* the holders' lines, largest own peak first */
	size_t n_top;
	int64_t h_hi[TL_TOP][COLS];             /* each line's max per column ... */
	bool h_on[TL_TOP][COLS];                /* ... where the line covers it */
};

static double px_x(const struct plot *p, uint64_t ns)
{
	return LEFT + (double)ns * COLS / (double)p->span_ns;
}

static double px_y(const struct plot *p, int64_t v)
{
	return TOP + ROWS - (double)(v > 0 ? v : 0) * ROWS / (double)p->ymax;
}

static void plot_compute(struct plot *p, const struct timeline *t)
{
	uint64_t at, top;

	memset(p, 0, sizeof(*p));
	p->t = t;
	p->span_ns = t->n ? t->n * t->width_ns : 1;
	for (int c = 0; c < COLS; c++) {
		uint64_t from = t->start_ns + p->span_ns * (uint64_t)c / COLS;
		uint64_t to = t->start_ns + p->span_ns * (uint64_t)(c + 1) / COLS;

		if (!timeline_range(t, from, to, &p->lo[c], &p->hi[c]))
			p->lo[c] = p->hi[c] = 0;
		if (p->hi[c] > p->plotted_max)
			p->plotted_max = p->hi[c];
	}
	p->n_top = timeline_top_tracks(t, p->top, TL_TOP);
	for (size_t k = 0; k < p->n_top; k++) {
		const struct timeline *l = &p->top[k]->line;

		for (int c = 0; c < COLS; c++) {
			uint64_t from = t->start_ns + p->span_ns * (uint64_t)c / COLS;
			uint64_t to = t->start_ns + p->span_ns * (uint64_t)(c + 1) / COLS;
			int64_t lo;

			p->h_on[k][c] = to > l->start_ns && from <= l->end_ns &&
					timeline_range(l, from, to, &lo, &p->h_hi[k][c]);
		}
	}
	p->has_peak = timeline_peak(t, &at, &p->peak);
	p->peak_ns = timeline_since(t, at);
	if (p->peak_ns > p->span_ns)
		p->peak_ns = p->span_ns;
	top = (uint64_t)(p->plotted_max > p->peak ? p->plotted_max : p->peak);
	timeline_y_ticks(timeline_bytes(t, (int64_t)(top + top / 16)), &p->ticks);
	p->ymax = (int64_t)((p->ticks.step_bytes * p->ticks.n + t->unit_bytes - 1) / t->unit_bytes);
	if (p->ymax <= 0)
		p->ymax = 1;
}

void timeline_y_ticks(uint64_t top_bytes, struct tl_ticks *k)
{
	static const struct { const char *name; uint64_t bytes; } units[] = {
		{ "B", 1 }, { "KiB", 1ULL << 10 }, { "MiB", 1ULL << 20 }, { "GiB", 1ULL << 30 },
		{ "TiB", 1ULL << 40 },
	};
	static const uint64_t m[] = { 1, 2, 5 };

	memset(k, 0, sizeof(*k));
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		/* 1, 2, 5, 10 ... 500 of the unit, while below the next unit */
		for (uint64_t pow = 1; pow <= 100; pow *= 10) {
			for (size_t i = 0; i < 3; i++) {
				uint64_t step = m[i] * pow * units[u].bytes;

				if (u + 1 < sizeof(units) / sizeof(units[0]) && step >= units[u + 1].bytes)
					continue;
				if ((top_bytes + step - 1) / step <= TL_TICKS_MAX || u + 1 == sizeof(units) / sizeof(units[0])) {
					k->step_bytes = step;
					k->n = (unsigned)((top_bytes + step - 1) / step);
					if (!k->n)
						k->n = 1;
					k->unit = units[u].name;
					k->unit_bytes = units[u].bytes;
					return;
				}
			}
		}
	}
}

static void xml_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

/* Time between ticks: 1, 2 or 5 times a power of ten ns, at most 6 ticks
 * (the page's script chooses the same way). */
static uint64_t tick_step(uint64_t span_ns)
{
	static const uint64_t m[] = { 1, 2, 5 };

	for (uint64_t p = 1;; p *= 10)
		for (int i = 0; i < 3; i++)
			if (span_ns / (m[i] * p) < 6)
				return m[i] * p;
}

static void svg_axes(FILE *out, const struct plot *p)
{
	char b[32];

	fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" stroke=\"#888\"/>\n",
		LEFT, TOP, COLS, ROWS);
	fputs("<g id=\"yticks\" text-anchor=\"end\" fill=\"#333\">", out);
	for (unsigned k = 0; k <= p->ticks.n; k++) {
		uint64_t bytes = p->ticks.step_bytes * k;
		double y = TOP + ROWS - (double)k * ROWS / p->ticks.n;

		snprintf(b, sizeof(b), "%.6g %s", (double)bytes / (double)p->ticks.unit_bytes, p->ticks.unit);
		fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%d\" y=\"%.1f\">%s</text>", LEFT, LEFT + COLS, y, y, LEFT - 6, y + 4,
			k ? b : "0");
	}
	fputs("</g>\n<g id=\"xticks\" text-anchor=\"middle\" fill=\"#333\">", out);
	for (uint64_t at = 0, step = tick_step(p->span_ns); at <= p->span_ns; at += step)
		fprintf(out, "<text x=\"%.1f\" y=\"%d\">%.9g s</text>", px_x(p, at), TOP + ROWS + 18,
			(double)at / 1e9);
	fprintf(out, "</g>\n<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#333\">time since "
		"the start; each column: the smallest and largest summed RSS in it</text>\n",
		LEFT + COLS / 2, TOP + ROWS + 38);
}

/* The area under each column's max, and the min-max band on it. */
static void svg_data(FILE *out, const struct plot *p)
{
	fprintf(out, "<path id=\"area\" fill=\"#cfe0f5\" d=\"M%d %d", LEFT, TOP + ROWS);
	for (int c = 0; c < COLS; c++)
		fprintf(out, "L%d %.1fL%d %.1f", LEFT + c, px_y(p, p->hi[c]), LEFT + c + 1, px_y(p, p->hi[c]));
	fprintf(out, "L%d %dZ\"/>\n", LEFT + COLS, TOP + ROWS);
	fputs("<path id=\"band\" stroke=\"#1f5fa8\" stroke-width=\"1\" stroke-linecap=\"square\" "
	      "fill=\"none\" d=\"", out);
	for (int c = 0; c < COLS; c++)
		fprintf(out, "M%.1f %.1fV%.1f", LEFT + c + 0.5, px_y(p, p->hi[c]), px_y(p, p->lo[c]));
	fputs("\"/>\n", out);
}

/* Each holder's line: its max per column. */
static void svg_holders(FILE *out, const struct plot *p)
{
	for (size_t k = 0; k < p->n_top; k++) {
		const struct tl_track *tr = p->top[k];
		bool pen = false;
		double last = 0;

		fprintf(out, "<path id=\"holder-%zu\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" "
			"data-own-peak-bytes=\"%" PRIu64 "\" d=\"", k + 1, holder_color[k],
			timeline_bytes(p->t, tr->line.peak));
		/* Steps: a point where the height changes, the run's end where
		 * the line stops. */
		for (int c = 0; c <= COLS; c++) {
			double y = c < COLS && p->h_on[k][c] ? px_y(p, p->h_hi[k][c]) : -1;

			if (pen && y != last)
				fprintf(out, "L%d %.1f", LEFT + c, last);
			if (y >= 0 && (!pen || y != last))
				fprintf(out, "%c%d %.1f", pen ? 'L' : 'M', LEFT + c, y);
			pen = y >= 0;
			last = y;
		}
		fputs("\"/>\n", out);
	}
}

/* Whether legend row k's thing is drawn (issue 36: the legend named a
 * band and dashed lines that were not there): the fill always; the band
 * where some column's smallest and largest sums are a pixel apart or
 * more; the peak marker when there is a peak; the dashed lines when there
 * are windows or marks; the other lines when a process has one. */
static bool legend_drawn(const struct plot *p, int k)
{
	switch (k) {
	case 1:
		for (int c = 0; c < COLS; c++)
			if (px_y(p, p->lo[c]) - px_y(p, p->hi[c]) >= 1.0)
				return true;
		return false;
	case 2:
		return p->has_peak;
	case 3:
		for (size_t i = 0; i < p->t->n_marks; i++)
			if (p->t->marks[i].kind == TL_MARK_WINDOW)
				return true;
		return false;
	case 4:
		return p->n_top > 0;
	default:
		return true;
	}
}

/* The legend, below the axes (never over the data): what the fill, the
 * band, the peak marker, the dashed lines and each holder's line mean,
 * each only where it is drawn. */
static void svg_legend(FILE *out, const struct plot *p)
{
	static const char *const what[LEGEND_ROWS] = {
		"filled: the tree's largest summed RSS in each column",
		"dark band: each column's smallest to largest sum",
		"red dot: the peak, as reported",
		"dashed lines: windows (-i, SIGUSR1) and marks, named above the plot",
		"other lines: a process's own RSS (the largest own peaks)",
	};
	char label[64], b[32];
	int x2 = LEFT + COLS / 2, row = 0;

	fprintf(out, "<g id=\"legend\" font-size=\"11\" fill=\"#000\">"
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fff\" stroke=\"#ccc\"/>",
		LEFT, LEGEND_Y - 12, COLS, LEGEND_ROWS * LEGEND_ROW + 4);
	for (int k = 0; k < (int)LEGEND_ROWS; k++) {
		int y = LEGEND_Y + LEGEND_ROW * row;

		if (!legend_drawn(p, k))
			continue;
		row++;
		if (k == 0)
			fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"9\" fill=\"#cfe0f5\"/>",
				LEFT + 8, y - 8);
		else if (k == 1)
			fprintf(out, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"9\" fill=\"#1f5fa8\"/>",
				LEFT + 8, y - 8);
		else if (k == 2)
			fprintf(out, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/>", LEFT + 17, y - 4, PEAK_COLOR);
		else if (k == 3)
			fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#777\" "
				"stroke-dasharray=\"4 3\"/>", LEFT + 8, LEFT + 26, y - 4, y - 4);
		fprintf(out, "<text x=\"%d\" y=\"%d\">%s</text>", LEFT + 32, y, what[k]);
	}
	for (size_t k = 0; k < p->n_top && k < LEGEND_ROWS; k++) {
		int y = LEGEND_Y + LEGEND_ROW * (int)k;

		timeline_track_label(p->top[k], label, sizeof(label));
		fprintf(out, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"3\"/>"
			"<text x=\"%d\" y=\"%d\">", x2 + 8, x2 + 26, y - 4, y - 4, holder_color[k], x2 + 32, y);
		xml_text(out, label);
		fprintf(out, " (own peak %s)</text>", format_bytes(timeline_bytes(p->t, p->top[k]->line.peak),
								   b, sizeof(b)));
	}
	fputs("</g>\n", out);
}

/* Whether mark i is named above the plot: every mark of the caller's
 * (m.mark("load")), and window marks while there are few. */
static bool mark_labelled(const struct timeline *t, size_t i, size_t n_windows)
{
	return strncmp(t->marks[i].label, "window ", 7) || n_windows <= MARK_LABELS_MAX;
}

static void svg_marks(FILE *out, const struct plot *p)
{
	const struct timeline *t = p->t;
	size_t n_windows = 0;
	double last_x = -1e9;
	char b[32];

	for (size_t i = 0; i < t->n_marks; i++)
		n_windows += t->marks[i].kind == TL_MARK_WINDOW;
	fputs("<g id=\"marks\" stroke=\"#777\" stroke-dasharray=\"4 3\">", out);
	for (size_t i = 0; i < t->n_marks; i++) {
		const struct tl_mark *m = &t->marks[i];
		double x;

		if (m->kind != TL_MARK_WINDOW)
			continue;
		x = px_x(p, timeline_since(t, m->ns));
		fprintf(out, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\"><title>", x, x, TOP, TOP + ROWS);
		xml_text(out, m->label);
		fputs("</title></line>", out);
	}
	fputs("</g>\n<g id=\"mark-labels\" font-size=\"10\" fill=\"#444\" text-anchor=\"middle\">", out);
	for (size_t i = 0; i < t->n_marks; i++) {
		if (t->marks[i].kind != TL_MARK_WINDOW)
			continue;
		double x = px_x(p, timeline_since(t, t->marks[i].ns));
		bool show = mark_labelled(t, i, n_windows) && x - last_x >= MARK_LABEL_GAP;

		if (show)
			last_x = x;
		/* Near an edge the name runs inwards, so that it is not cut. */
		fprintf(out, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\"%s>", x, TOP - 4,
			x > LEFT + COLS - 40 ? "end" : x < LEFT + 40 ? "start" : "middle",
			show ? "" : " style=\"display:none\"");
		xml_text(out, t->marks[i].label);
		fputs("</text>", out);
	}
	fputs("</g>\n", out);
	if (!p->has_peak)
		return;
	double x = px_x(p, p->peak_ns), y = px_y(p, p->peak);

	fprintf(out, "<circle id=\"peak-marker\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\">", x, y, PEAK_COLOR);
	if (t->stacks.path) {
		/* Hover: the stacks at the peak (docs/stacks.md). */
		fputs("<title>", out);
		xml_text(out, t->stacks.what);
		fputs(" in ", out);
		xml_text(out, t->stacks.path);
		fputs(": ", out);
		xml_text(out, t->stacks.summary);
		fputs("</title>", out);
	}
	fputs("</circle>\n", out);
	fprintf(out, "<text id=\"peak-label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" fill=\"#000\">"
		"peak %s at %.3f s</text>\n", x > LEFT + COLS / 2 ? x - 9 : x + 9, y - 8,
		x > LEFT + COLS / 2 ? "end" : "start", format_bytes(timeline_bytes(t, p->peak), b, sizeof(b)),
		(double)p->peak_ns / 1e9);
}

static void svg_body(FILE *out, const struct plot *p, const char *title)
{
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"plot\" width=\"%d\" height=\"%d\" "
		"viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"12\" "
		"data-plotted-max-bytes=\"%" PRIu64 "\" data-peak-bytes=\"%" PRIu64 "\">\n",
		PLOT_W, PLOT_H, PLOT_W, PLOT_H, timeline_bytes(p->t, p->plotted_max), timeline_bytes(p->t, p->peak));
	fprintf(out, "<rect width=\"%d\" height=\"%d\" fill=\"#f7f7f7\"/>\n", PLOT_W, PLOT_H);
	fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"14\" fill=\"#000\">peakbpf: ", LEFT, TOP - 24);
	xml_text(out, title);
	fputs("</text>\n", out);
	svg_axes(out, p);
	svg_data(out, p);
	svg_holders(out, p);
	svg_marks(out, p);
	svg_legend(out, p);
}

int timeline_write_svg(const struct timeline *t, const char *title, FILE *out)
{
	struct plot p;

	plot_compute(&p, t);
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", out);
	svg_body(out, &p, title);
	fputs("</svg>\n", out);
	return ferror(out) ? -EIO : 0;
}

/* The page's script: hover values, drag to zoom (each column keeps the min
 * and max of the buckets it covers), double-click to see everything. */
static const char page_script[] =
"(function(){\n"
"var L=80,T=48,CW=860,RH=316,svg=document.getElementById('plot');\n"
"var v0=0,v1=D.n*D.w,drag=null;\n"
"function y(v){return T+RH-Math.max(v,0)*RH/D.ymax;}\n"
"function x(ns){return L+(ns-v0)*CW/(v1-v0);}\n"
"function fmt(b){var u=['B','KiB','MiB','GiB','TiB'],i=0;b*=D.unit;"
"while(b>=1024&&i<4){b/=1024;i++;}return i?b.toFixed(1)+' '+u[i]:b+' B';}\n"
"function col(c){var a=v0+(v1-v0)*c/CW,b=v0+(v1-v0)*(c+1)/CW;"
"var i=Math.min(Math.floor(a/D.w),D.n-1),j=Math.min(Math.max(i,Math.ceil(b/D.w)-1),D.n-1);"
"var lo=D.min[i],hi=D.max[i];for(var k=i+1;k<=j;k++){if(D.min[k]<lo)lo=D.min[k];"
"if(D.max[k]>hi)hi=D.max[k];}return [lo,hi];}\n"
"function el(id){return document.getElementById(id);}\n"
"function hcol(H,c){var a=v0+(v1-v0)*c/CW,b=v0+(v1-v0)*(c+1)/CW;if(b<=H.s||a>H.e)return null;"
"var i=Math.max(0,Math.min(Math.floor((a-H.s)/H.w),H.max.length-1)),"
"j=Math.max(i,Math.min(Math.ceil((b-H.s)/H.w)-1,H.max.length-1)),hi=H.max[i];"
"for(var k=i+1;k<=j;k++)if(H.max[k]>hi)hi=H.max[k];return hi;}\n"
"function draw(){var a='M'+L+' '+(T+RH),d='';for(var c=0;c<CW;c++){var m=col(c);"
"a+='L'+(L+c)+' '+y(m[1])+'L'+(L+c+1)+' '+y(m[1]);d+='M'+(L+c+0.5)+' '+y(m[1])+'V'+y(m[0]);}\n"
"el('area').setAttribute('d',a+'L'+(L+CW)+' '+(T+RH)+'Z');el('band').setAttribute('d',d);\n"
"for(var h=0;h<D.h.length;h++){var H=D.h[h],s='',on=false;for(var c2=0;c2<CW;c2++){"
"var q=hcol(H,c2);if(q===null){on=false;continue;}s+=(on?'L':'M')+(L+c2)+' '+y(q)+'L'+(L+c2+1)+' '+y(q);on=true;}"
"el('holder-'+(h+1)).setAttribute('d',s);}\n"
"var st=1,h='';for(var p=1;;p*=10){var f=[1,2,5].filter(function(m){return (v1-v0)/(m*p)<6;});"
"if(f.length){st=f[0]*p;break;}}\n"
"for(var t=Math.ceil(v0/st)*st;t<=v1;t+=st)h+='<text x=\"'+x(t).toFixed(1)+'\" y=\"'+(T+RH+18)+'\">'"
"+parseFloat((t/1e9).toPrecision(9))+' s</text>';el('xticks').innerHTML=h;\n"
"var k;\n"
"var ls=el('marks').children,lb=el('mark-labels').children,lx=-1e9;for(k=0;k<ls.length;k++){var px=x(D.marks[k]);"
"ls[k].setAttribute('x1',px);ls[k].setAttribute('x2',px);lb[k].setAttribute('x',px);"
"lb[k].setAttribute('text-anchor',px>L+CW-40?'end':px<L+40?'start':'middle');"
"ls[k].style.display=px<L||px>L+CW?'none':'';"
"var sh=D.named[k]&&ls[k].style.display===''&&px-lx>=56;if(sh)lx=px;lb[k].style.display=sh?'':'none';}\n"
"var pm=el('peak-marker'),pl=el('peak-label');if(pm){var px2=x(D.peak);pm.setAttribute('cx',px2);"
"pl.setAttribute('x',px2+9);pl.setAttribute('text-anchor','start');"
"pm.style.display=pl.style.display=px2<L||px2>L+CW?'none':'';}}\n"
"function colAt(e){var r=svg.getBoundingClientRect();"
"return Math.floor((e.clientX-r.left)*960/r.width)-L;}\n"
"svg.addEventListener('mousemove',function(e){var c=colAt(e),h=el('hover'),s=el('sel');"
"if(drag!==null){var a=Math.max(0,Math.min(drag,c)),b=Math.min(CW,Math.max(drag,c));"
"s.setAttribute('x',L+a);s.setAttribute('width',b-a);s.style.display='';}\n"
"if(c<0||c>=CW){h.textContent='';return;}var m=col(c),s2=((v0+(v1-v0)*c/CW)/1e9).toFixed(4)+"
"' s \u2014 tree: min '+fmt(m[0])+', max '+fmt(m[1]);"
"for(var q=0;q<D.h.length;q++){var hv=hcol(D.h[q],c);s2+=' \u00b7 '+D.h[q].label+': '+(hv===null?'\u2013':fmt(hv));}"
"h.textContent=s2;});\n"
"svg.addEventListener('mousedown',function(e){drag=colAt(e);e.preventDefault();});\n"
"svg.addEventListener('mouseup',function(e){var c=colAt(e);el('sel').style.display='none';"
"if(drag!==null&&Math.abs(c-drag)>2){var a=Math.max(0,Math.min(drag,c)),b=Math.min(CW,Math.max(drag,c));"
"var n0=v0+(v1-v0)*a/CW,n1=v0+(v1-v0)*b/CW;if(n1-n0>=D.w){v0=n0;v1=n1;draw();}}drag=null;});\n"
"svg.addEventListener('dblclick',function(){v0=0;v1=D.n*D.w;draw();});\n"
"})();\n";

/* The buckets and marks the script needs, as a JavaScript object. */
static void page_data(FILE *out, const struct plot *p)
{
	const struct timeline *t = p->t;
	struct json_writer w;
	size_t n_windows = 0;
	char label[64];

	fputs("var D=", out);
	json_init(&w, out);
	json_begin_object(&w);
	json_kv_uint(&w, "w", t->width_ns);
	json_kv_uint(&w, "n", t->n);
	json_kv_uint(&w, "unit", t->unit_bytes);
	json_kv_int(&w, "ymax", p->ymax);
	json_kv_uint(&w, "peak", p->peak_ns);
	json_key(&w, "min");
	json_begin_array(&w);
	for (size_t i = 0; i < t->n; i++)
		json_int(&w, t->b[i].min);
	json_end_array(&w);
	json_key(&w, "max");
	json_begin_array(&w);
	for (size_t i = 0; i < t->n; i++)
		json_int(&w, t->b[i].max);
	json_end_array(&w);
	json_key(&w, "h");             /* the holders' lines: start, end, width, maxes */
	json_begin_array(&w);
	for (size_t k = 0; k < p->n_top; k++) {
		const struct timeline *l = &p->top[k]->line;

		timeline_track_label(p->top[k], label, sizeof(label));
		json_begin_object(&w);
		json_kv_string(&w, "label", label);
		json_kv_uint(&w, "s", timeline_since(t, l->start_ns));
		json_kv_uint(&w, "e", timeline_since(t, l->end_ns));
		json_kv_uint(&w, "w", l->width_ns);
		json_key(&w, "max");
		json_begin_array(&w);
		for (size_t i = 0; i < l->n; i++)
			json_int(&w, l->b[i].max);
		json_end_array(&w);
		json_end_object(&w);
	}
	json_end_array(&w);
	json_key(&w, "marks");
	json_begin_array(&w);
	for (size_t i = 0; i < t->n_marks; i++)
		if (t->marks[i].kind == TL_MARK_WINDOW)
			json_uint(&w, timeline_since(t, t->marks[i].ns));
	json_end_array(&w);
	for (size_t i = 0; i < t->n_marks; i++)
		n_windows += t->marks[i].kind == TL_MARK_WINDOW;
	json_key(&w, "named");         /* which marks' names show */
	json_begin_array(&w);
	for (size_t i = 0; i < t->n_marks; i++)
		if (t->marks[i].kind == TL_MARK_WINDOW)
			json_bool(&w, mark_labelled(t, i, n_windows));
	json_end_array(&w);
	json_end_object(&w);
	json_finish(&w);        /* ends the line */
	fputs(";\n", out);      /* else the script's first ( would call it */
}

/* The page's link to the stacks file: a file: URL of its absolute path,
 * each byte but [A-Za-z0-9/._~-] percent-encoded. */
static void file_url(FILE *out, const char *path)
{
	fputs("file://", out);
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		    strchr("/._~-", *c))
			fputc(*c, out);
		else
			fprintf(out, "%%%02X", *c);
	}
}

/* --stacks at the peak: the file (a link when its path is absolute) and
 * the summary, the top stacks with their bytes. */
static void page_stacks(FILE *out, const struct timeline *t)
{
	if (!t->stacks.path)
		return;
	fputs("<p id=\"stacks\">At the peak, the resident pages by the stack of the fault that brought each in ("
	      "docs/stacks.md): ", out);
	xml_text(out, t->stacks.what);
	fputs(" in ", out);
	if (t->stacks.path[0] == '/') {
		fputs("<a href=\"", out);
		file_url(out, t->stacks.path);
		fputs("\">", out);
	}
	xml_text(out, t->stacks.path);
	fputs(t->stacks.path[0] == '/' ? "</a></p>\n" : "</p>\n", out);
	fputs("<pre id=\"stacks-summary\">", out);
	xml_text(out, t->stacks.summary);
	fputs("</pre>\n", out);
}

int timeline_write_html(const struct timeline *t, const char *title, FILE *out)
{
	struct plot p;

	plot_compute(&p, t);
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>peakbpf: ", out);
	xml_text(out, title);
	fputs("</title>\n<style>body{margin:0;font-family:sans-serif;background:#f7f7f7}"
	      "svg{display:block;width:100%;height:auto;user-select:none;cursor:crosshair}"
	      "p,#hover,pre{margin:4px 8%;font-size:13px;color:#333}#hover{min-height:1.3em;color:#000}"
	      "pre{white-space:pre-wrap}"
	      "</style></head><body>\n", out);
	svg_body(out, &p, title);
	fprintf(out, "<rect id=\"sel\" y=\"%d\" height=\"%d\" fill=\"#1f5fa8\" fill-opacity=\"0.15\" "
		"style=\"display:none\"/>\n</svg>\n", TOP, ROWS);
	fputs("<div id=\"hover\"></div>\n<p>Hover for every line's value at that instant; drag across "
	      "the plot to zoom in (each column keeps the smallest and largest value in it); "
	      "double-click to see the whole run.</p>\n", out);
	page_stacks(out, t);
	fputs("<script>\n", out);
	page_data(out, &p);
	fputs(page_script, out);
	fputs("</script>\n</body></html>\n", out);
	return ferror(out) ? -EIO : 0;
}
