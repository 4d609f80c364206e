// SPDX-License-Identifier: MIT
#include <stdlib.h>
#include <string.h>
#include "stats.h"

double stats_sqrt(double x)
{
	double r;

	if (!(x > 0) || x != x + x * 0)
		return 0;
	r = x > 1 ? x : 1;      /* at or above the root: Newton descends to it */
	for (int i = 0; i < 2100; i++) {
		double next = 0.5 * (r + x / r);

		if (next >= r)
			break;
		r = next;
	}
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void stats_compute(const double *v, size_t n, struct stat5 *out)
{
	double *s, sum = 0, sq = 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	s = malloc(n * sizeof(*s));
	if (!s)
		return;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->n = n;
	out->min = s[0];
	out->max = s[n - 1];
	out->mean = sum / (double)n;
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	if (n >= 2) {
		for (size_t i = 0; i < n; i++)
			sq += (s[i] - out->mean) * (s[i] - out->mean);
		out->stddev = stats_sqrt(sq / (double)(n - 1));
		out->has_stddev = true;
	}
	free(s);
}
