// SPDX-License-Identifier: MIT
/* The helper's log (serve_int.h): one line on stderr, which its unit's
 * journal keeps. Its own file, so that every part of the helper can say
 * something without reaching back into another. */
#include <stdarg.h>
#include <stdio.h>
#include "serve_int.h"

void serve_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("peakbpf serve: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}
