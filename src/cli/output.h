/* SPDX-License-Identifier: MIT */
/* The CLI's JSON outputs: -o FILE and stdout. */
#ifndef PEAKBPF_OUTPUT_H
#define PEAKBPF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

/*
 * -o FILE holds the command line: created 0600, never through a symbolic
 * link, and handed to the user who ran sudo, if peakbpf is root by sudo.
 * It is opened before the run, so that a path that cannot be written fails
 * before the command runs, but emptied only when the first record is
 * written. NULL with errno set on failure.
 */
FILE *output_open(const char *path, bool *created);
/* Write one record (a JSON line) and flush it (a killed run keeps it); the
 * first failure's errno is kept in *first_errno for the message at the end. */
void output_write(FILE *f, const char *record, int *first_errno);
/* A record that could not be written is a failure of peakbpf's, not a
 * silent success: say so, with the command's own status, which it hides.
 * 0 when write_errno is 0, else -write_errno. */
int output_check(int write_errno, const char *what, int command_status);


#endif
