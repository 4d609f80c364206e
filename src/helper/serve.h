/* SPDX-License-Identifier: MIT */
/* `peakbpf serve`: the privileged helper (serve.c). */
#ifndef PEAKBPF_SERVE_H
#define PEAKBPF_SERVE_H

/* argv[0] is "serve". Returns the exit status. */
int serve_main(int argc, char **argv);

#endif
