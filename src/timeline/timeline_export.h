/* SPDX-License-Identifier: MIT */
/*
 * A timeline (timeline.h) as a file, in the format its extension names:
 *   .json  Chrome/Perfetto trace events: counter tracks ("ph":"C", the
 *          bucket's max and min in bytes, an event where either changes),
 *          instant events for closed windows and the peak, and the timeline's
 *          own facts under otherData.peakbpf_timeline (ui.perfetto.dev opens it)
 *   .csv   one row a bucket (kind,t_s,width_s,min_bytes,max_bytes,label),
 *          then a row a mark, one for the peak and one for the title
 *   .svg   a static plot: the min-max band per pixel column, window marks and
 *          a marker on the peak
 *   .html  one self-contained page: the same SVG, the buckets inline, hover
 *          values and a drag-to-zoom that keeps every column's min and max
 * and back (timeline_load: .json or .csv written here), for `peakbpf plot`.
 * Times in a file are since the timeline's start; values are bytes.
 */
#ifndef PEAKBPF_TIMELINE_EXPORT_H
#define PEAKBPF_TIMELINE_EXPORT_H

#include <stddef.h>
#include <stdio.h>
#include "timeline.h"

/* Write path in its extension's format; title names the run (the command,
 * or the PIDs). 0, or a negative errno and a one-line reason in err. */
int timeline_write(const struct timeline *t, const char *title, const char *path,
		   char *err, size_t errlen);

/* Each format to a stream. 0 or -EIO. */
int timeline_write_json(const struct timeline *t, const char *title, FILE *out);
int timeline_write_csv(const struct timeline *t, FILE *out);
int timeline_write_svg(const struct timeline *t, const char *title, FILE *out);
int timeline_write_html(const struct timeline *t, const char *title, FILE *out);

/*
 * Read a .json or .csv timeline written by timeline_write: t is filled
 * (start 0, unit 1 byte) and must be freed with timeline_free; title gets
 * the run's name (a .csv of before its title row: its file name). 0, or a negative errno
 * and a one-line reason in err.
 */
int timeline_load(const char *path, struct timeline *t, char *title, size_t title_len,
		  char *err, size_t errlen);

/* The plots' y axis: n steps of step_bytes (1, 2 or 5 times a power of ten
 * of the unit: B, KiB, MiB, GiB or TiB), n <= TL_TICKS_MAX, their top the
 * first multiple of step at or above top_bytes. */
#define TL_TICKS_MAX 5U
struct tl_ticks {
	uint64_t step_bytes;
	unsigned n;
	const char *unit;
	uint64_t unit_bytes;
};
void timeline_y_ticks(uint64_t top_bytes, struct tl_ticks *k);

/* The same from a file's text (NUL-terminated; the CSV reader cuts it up):
 * 0, or a negative errno with t freed. */
int timeline_parse(enum tl_format f, char *text, struct timeline *t, char *title, size_t title_len);

/* `peakbpf plot RECORD -o OUT`: argv[0] is "plot". Returns the exit status. */
int plot_main(int argc, char **argv);

#endif
