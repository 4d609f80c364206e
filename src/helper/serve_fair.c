// SPDX-License-Identifier: MIT
/* Who gets the helper's connections and trees when they run short (serve_fair.h). */
#include "serve_fair.h"

static size_t held_by(const struct fair_conn *c, size_t n, uid_t uid)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += c[i].uid == uid;
	return k;
}

bool fair_tree_allowed(unsigned held, unsigned free)
{
	if (held >= SERVE_TREES_PER_UID || free == 0)
		return false;
	return held == 0 || free > SERVE_TREES_RESERVE;
}

long fair_victim(const struct fair_conn *c, size_t n, uid_t uid)
{
	size_t mine = held_by(c, n, uid), most = 0;
	long victim = -1;

	for (size_t i = 0; i < n; i++) {
		size_t k;

		if (c[i].uid == 0 || c[i].uid == uid || !c[i].idle)
			continue;
		k = held_by(c, n, c[i].uid);
		/* the newest idle one of the user holding the most */
		if (k >= mine + 2 && k >= most) {
			most = k;
			victim = (long)i;
		}
	}
	return victim;
}
