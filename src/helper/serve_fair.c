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

unsigned fair_users(const struct fair_conn *c, size_t n)
{
	unsigned users = 0;

	for (size_t i = 0; i < n; i++) {
		bool seen = c[i].uid == 0;

		for (size_t j = 0; j < i && !seen; j++)
			seen = c[j].uid == c[i].uid;
		users += !seen;
	}
	return users;
}

unsigned fair_tree_share(unsigned slots, unsigned users)
{
	unsigned pool = slots > SERVE_ROOT_TREES ? slots - SERVE_ROOT_TREES : 0;
	unsigned share = pool / (users + 1);

	if (share < 1)
		share = 1;
	return share > SERVE_TREES_PER_UID ? SERVE_TREES_PER_UID : share;
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
