/* SPDX-License-Identifier: MIT */
/*
 * --stacks' symbols (docs/stacks.md): each address space's file mappings
 * read from /proc/PID/maps while its process lives (at its first fault,
 * again when a frame falls outside them), with each file's GNU build-id;
 * a frame is named at the end from the ELF file (libelf: .symtab, else
 * .dynsym), when the file is still there with the same build-id, else
 * "module+0xOFFSET" (the file offset), or "0xADDRESS" outside any file.
 */
#ifndef PEAKBPF_STACKS_SYM_H
#define PEAKBPF_STACKS_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct stacks_sym;

int stacks_sym_new(struct stacks_sym **out);
void stacks_sym_free(struct stacks_sym *s);
/* A fault of mm by tgid with these frames: read its maps if not read yet,
 * or if a frame is outside them (once per mm and call of stacks_sym_tick). */
void stacks_sym_note(struct stacks_sym *s, __u64 mm, __u32 tgid, const __u64 *frames, __u32 n);
/* A drain's start: an mm may be read again. */
void stacks_sym_tick(struct stacks_sym *s);
/* The process's command name as read with its maps ("?" if never). */
const char *stacks_sym_comm(struct stacks_sym *s, __u64 mm);
/* Whether addr, in mm, is a return address: in an executable file
 * mapping, just after a call instruction (the bytes read from the file). */
bool stacks_sym_is_return(struct stacks_sym *s, __u64 mm, __u64 addr);
/* How many of a fault's frames (the ip first, then the frame-pointer
 * chain's return addresses) to name: the chain up to its first address
 * outside an executable mapping of mm. Code built without frame pointers
 * may use rbp for anything: the walk then reads words that are no return
 * address, and none is named. n if mm's maps were never read. */
__u32 stacks_sym_chain(struct stacks_sym *s, __u64 mm, const __u64 *frames, __u32 n);
/* The frame's name into buf ("func", "module+0xOFF", "0xADDR"); whether
 * it was named from a symbol. */
bool stacks_sym_name(struct stacks_sym *s, __u64 mm, __u64 addr, char *buf, size_t len);

#endif
