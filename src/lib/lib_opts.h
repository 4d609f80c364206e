/* SPDX-License-Identifier: MIT */
/* libpeakbpf's options structs, sized by their callers (libbpf's opts). */
#ifndef PEAKBPF_LIB_OPTS_H
#define PEAKBPF_LIB_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* A caller's options struct of in_sz bytes into ours of out_sz,
 * libbpf-style: fields past in_sz are zero, and fields past ours must be
 * zero (-E2BIG); in_sz below a size_t: -EINVAL. Sessions and figures take one. */
static inline int lib_copy_sized(const void *in, size_t in_sz, void *out, size_t out_sz)
{
	memset(out, 0, out_sz);
	if (!in)
		return 0;
	if (in_sz < sizeof(size_t))
		return -EINVAL;
	for (size_t i = out_sz; i < in_sz; i++)
		if (((const char *)in)[i])
			return -E2BIG;
	memcpy(out, in, in_sz < out_sz ? in_sz : out_sz);
	return 0;
}

#endif
