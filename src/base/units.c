// SPDX-License-Identifier: MIT
/*
 * Parsing and printing of sizes, durations and PIDs given by the user.
 *
 * Numbers are "DIGITS" or "DIGITS.DIGITS": no sign, no leading or trailing
 * space, no exponent, no hex, no "inf"/"nan"; a size may have blanks
 * between its number and its unit ("100 MiB"), a duration not. The integer part goes through strtoull(); the
 * fraction is scaled with exact integer arithmetic rather than strtod(),
 * so results do not depend on LC_NUMERIC and are exact for any size up to
 * UINT64_MAX (a double would lose bytes above 2^53).
 *
 * Fractions are rounded to the nearest unit (byte, nanosecond), ties away
 * from zero: "0.5B" is 1 byte.
 */
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A number as written: integer part, and the digits after the point. */
struct decimal {
	uint64_t ipart;
	const char *frac; /* first digit after '.', or NULL */
	size_t frac_len;
	const char *end; /* first character after the number */
};

static int parse_decimal(const char *s, struct decimal *d)
{
	char *end;

	/* strtoull() would skip spaces and accept a sign; insist on a digit. */
	if (!is_digit(s[0]))
		return -EINVAL;
	errno = 0;
	d->ipart = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno != 0 || end == s)
		return -EINVAL;

	d->frac = NULL;
	d->frac_len = 0;
	d->end = end;
	if (*end == '.') {
		const char *p = end + 1;

		while (is_digit(*p))
			p++;
		if (p == end + 1) /* "1." or "1.K" */
			return -EINVAL;
		d->frac = end + 1;
		d->frac_len = (size_t)(p - d->frac);
		d->end = p;
	}
	return 0;
}

/*
 * round(0.DIGITS * mult), exactly, for mult <= UINT64_MAX / 10.
 * Multiplies the decimal fraction by mult from its last digit to its first,
 * like long multiplication by hand: what carries out of the first digit is
 * the integer part, and the first digit left behind says whether the rest
 * is at least one half.
 */
static uint64_t scale_fraction(const char *digits, size_t n, uint64_t mult)
{
	uint64_t carry = 0, first = 0;

	/* Invariant: carry < mult, so v < 10 * mult never overflows. */
	while (n-- > 0) {
		uint64_t v = (uint64_t)(digits[n] - '0') * mult + carry;

		first = v % 10;
		carry = v / 10;
	}
	return carry + (first >= 5);
}

/* d * mult, rounded to an integer; -ERANGE if that does not fit. */
static int scale_decimal(const struct decimal *d, uint64_t mult, uint64_t *out)
{
	uint64_t whole, part = 0;

	if (d->ipart > UINT64_MAX / mult)
		return -ERANGE;
	whole = d->ipart * mult;
	if (d->frac)
		part = scale_fraction(d->frac, d->frac_len, mult);
	if (part > UINT64_MAX - whole)
		return -ERANGE;
	*out = whole + part;
	return 0;
}

/*
 * Bytes per unit, any case: "" or B; K, M, G, T and KiB ... TiB are powers
 * of 1024; KB, MB, GB, TB are powers of 1000 (as disks and the SI write
 * them). One or more blanks may come before the unit. 0 if not a unit.
 */
static uint64_t size_unit_bytes(const char *u)
{
	static const char letters[] = "kmgt";
	const char *l;
	uint64_t bin = 1, dec = 1;

	while (*u == ' ' || *u == '\t')
		u++;
	if (u[0] == '\0' || ((u[0] == 'b' || u[0] == 'B') && u[1] == '\0'))
		return 1;
	l = u[0] ? strchr(letters, u[0] | 0x20) : NULL;
	if (!l)
		return 0;
	for (const char *p = letters; p <= l; p++) {
		bin *= 1024;
		dec *= 1000;
	}
	if (u[1] == '\0' || !strcasecmp(u + 1, "ib"))
		return bin;
	if (!strcasecmp(u + 1, "b"))
		return dec;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	struct decimal d;
	uint64_t mult;
	int err;

	if (!s)
		return -EINVAL;
	err = parse_decimal(s, &d);
	if (err)
		return err;
	if (*d.end && !d.end[strspn(d.end, " \t")])
		return -EINVAL;         /* blanks, and no unit after them */
	mult = size_unit_bytes(d.end);
	if (!mult)
		return -EINVAL;
	return scale_decimal(&d, mult, bytes);
}

/* "", "s", "ms", "us", "m" -> nanoseconds per unit; 0 if not a unit. */
static uint64_t duration_unit_ns(const char *u)
{
	if (strcmp(u, "") == 0 || strcmp(u, "s") == 0)
		return NSEC_PER_SEC;
	if (strcmp(u, "ms") == 0)
		return NSEC_PER_MSEC;
	if (strcmp(u, "us") == 0)
		return NSEC_PER_USEC;
	if (strcmp(u, "m") == 0)
		return 60 * NSEC_PER_SEC;
	if (strcmp(u, "h") == 0)
		return 3600 * NSEC_PER_SEC;
	return 0;
}

int parse_duration(const char *s, uint64_t *ns)
{
	struct decimal d;
	uint64_t mult, v;
	int err;

	if (!s)
		return -EINVAL;
	err = parse_decimal(s, &d);
	if (err)
		return err;
	mult = duration_unit_ns(d.end);
	if (mult == 0)
		return -EINVAL;
	err = scale_decimal(&d, mult, &v);
	if (err)
		return err;
	if (v == 0) /* "0", "0s", or less than half a nanosecond */
		return -EINVAL;
	*ns = v;
	return 0;
}

/*
 * Items are checked left to right and the first bad one decides the error;
 * on error *count is 0 and pids[] holds unspecified values.
 */
int parse_pid_list(const char *s, pid_t *pids, size_t max, size_t *count)
{
	const char *p = s;
	size_t n = 0;

	*count = 0;
	if (!s)
		return -EINVAL;
	for (;;) {
		unsigned long long v;
		char *end;
		size_t i;

		/* Also rejects "", ",1", "1,,2", "1,", "-3", "+3", " 3". */
		if (!is_digit(*p))
			return -EINVAL;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (*end != ',' && *end != '\0')
			return -EINVAL;
		if (errno == ERANGE || v > INT32_MAX)
			return -ERANGE;
		if (v == 0)
			return -EINVAL;
		for (i = 0; i < n; i++)
			if (pids[i] == (pid_t)v)
				return -EEXIST;
		if (n == max)
			return -E2BIG;
		pids[n++] = (pid_t)v;
		if (*end == '\0')
			break;
		p = end + 1;
	}
	*count = n;
	return 0;
}

/* x / 2^shift to the nearest integer, ties up; shift in [10, 60]. */
static uint64_t div_pow2_round(uint64_t x, unsigned shift)
{
	uint64_t rem = x & (((uint64_t)1 << shift) - 1);

	return (x >> shift) + (rem >> (shift - 1));
}

/* x / d to the nearest integer, ties up, without overflow near UINT64_MAX. */
static uint64_t div_round(uint64_t x, uint64_t d)
{
	return x / d + (x % d >= d - d / 2);
}

const char *format_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned u = 0, shift;
	uint64_t tenths;

	if (!buf || len == 0)
		return buf;
	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return buf;
	}
	/* The largest unit that is at most bytes ... */
	while (u + 1 < sizeof(units) / sizeof(units[0]) && bytes >> (10 * (u + 2)) != 0)
		u++;
	/*
	 * ... in tenths, rounded: bytes * 10 / 2^shift. The remainder is below
	 * 2^60, so times ten it still fits.
	 */
	for (;;) {
		uint64_t rem;

		shift = 10 * (u + 1);
		rem = bytes & (((uint64_t)1 << shift) - 1);
		tenths = (bytes >> shift) * 10 + div_pow2_round(rem * 10, shift);
		/* 1048575 bytes is "1.0 MiB", not "1024.0 KiB". */
		if (tenths < 10240 || u + 1 == sizeof(units) / sizeof(units[0]))
			break;
		u++;
	}
	snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " %s", tenths / 10, tenths % 10, units[u]);
	return buf;
}

/*
 * Below 1 us there is no unit in the documented set that would not print
 * "0 us" for a non-zero time, so those are printed as "N ns".
 */
const char *format_duration(uint64_t ns, char *buf, size_t len)
{
	uint64_t v;

	if (!buf || len == 0)
		return buf;
	if (ns < NSEC_PER_USEC) {
		snprintf(buf, len, "%" PRIu64 " ns", ns);
		return buf;
	}
	v = div_round(ns, NSEC_PER_USEC);
	if (v < 1000) {
		snprintf(buf, len, "%" PRIu64 " us", v);
		return buf;
	}
	v = div_round(ns, NSEC_PER_MSEC / 10); /* tenths of ms */
	if (v < 10000) {
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 " ms", v / 10, v % 10);
		return buf;
	}
	v = div_round(ns, NSEC_PER_MSEC); /* thousandths of s */
	snprintf(buf, len, "%" PRIu64 ".%03" PRIu64 " s", v / 1000, v % 1000);
	return buf;
}
