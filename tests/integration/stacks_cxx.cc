// SPDX-License-Identifier: MIT
/*
 * t_stacks_cxx's workload (tests/integration/test_stacks_programs.sh): a
 * C++ program of Debian's toolchain (g++, libstdc++), built with frame
 * pointers (Makefile); libstdc++ and glibc are Debian's, without them.
 * Functions in a namespace, one a template, fill std::vector<char>s of
 * known sizes, so that --stacks gives each its resident bytes at the peak:
 *   work::fill_48       48 MiB kept             -> 48 MiB
 *   work::fill_96        96 MiB kept             -> 96 MiB
 *   work::Pool<24>::grow 24 MiB kept (a template) -> 24 MiB
 *   work::dropped_32     32 MiB, freed before the peak -> 0
 * Each vector is sized with resize(), so that libstdc++ value-initialises
 * it (memset, in glibc) in the function that asked for it: its pages are
 * written by memset, whose caller is libstdc++'s or the function's own
 * inlined code. glibc's malloc serves each (over its mmap threshold) by a
 * mmap of its own, unmapped at delete. MADV_NOHUGEPAGE is not asked: a
 * malloc'd region's THP is the system's setting (the test says which).
 */
#include <time.h>
#include <vector>

namespace work {

constexpr std::size_t MiB = 1024 * 1024;

__attribute__((noinline)) std::vector<char> *fill_48()
{
	auto *v = new std::vector<char>;

	v->resize(48 * MiB, 1);
	return v;
}

__attribute__((noinline)) std::vector<char> *fill_96()
{
	auto *v = new std::vector<char>;

	v->resize(96 * MiB, 1);
	return v;
}

template <std::size_t N> struct Pool {
	std::vector<char> data;

	__attribute__((noinline)) void grow()
	{
		data.resize(N * MiB, 1);
	}
};

__attribute__((noinline)) long dropped_32()
{
	std::vector<char> v(32 * MiB, 1);

	return v[v.size() - 1];
}

} // namespace work

int main()
{
	struct timespec hold = { 0, 200 * 1000 * 1000 };
	long sum = work::dropped_32();
	auto *a = work::fill_48();
	auto *b = work::fill_96();
	auto *p = new work::Pool<24>;

	p->grow();
	nanosleep(&hold, nullptr);
	sum += (*a)[0] + (*b)[0] + p->data[0];
	delete a;
	delete b;
	delete p;
	return sum == 4 ? 0 : 1;
}
