// SPDX-License-Identifier: MIT
/* stacks_sym.h: each mm's file mappings, and frames named from ELF files. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "stacks_sym.h"
#include "u64map.h"

#define BUILD_ID_MAX 64
#define NT_GNU_BUILD_ID_TYPE 3

struct sym {
	__u64 addr, size;
	const char *name;       /* in the module's strtab copy */
};

struct module {
	char *path;             /* as /proc/PID/maps names it ("... (deleted)") */
	__u64 ino;              /* its inode, as the maps line gives it */
	int fd;                 /* a deleted file: kept open from /proc/PID/map_files; else -1 */
	__u8 build_id[BUILD_ID_MAX];
	size_t build_id_len;    /* 0: none read at capture */
	bool loaded;            /* symbols read (or tried) */
	struct sym *syms;
	size_t n_syms;
	char *strtab;           /* the names, copied out of the ELF */
	struct { __u64 offset, filesz, vaddr; } loads[16];
	size_t n_loads;
};

struct mapping {
	__u64 start, end, off;
	int module;             /* -1: not a file ([heap], [stack], anon) */
	bool exec;
};

struct mm_maps {
	struct mapping *v;
	size_t n;
	unsigned read_tick;     /* the tick it was last read at */
	char comm[16];
};

struct stacks_sym {
	struct u64map index;    /* mm -> index + 1 in mms */
	struct mm_maps *mms;
	size_t n_mms;
	struct module *mods;
	size_t n_mods;
	unsigned tick;
	/* C++ names: libstdc++'s __cxa_demangle, opened at the first "_Z" name. */
	void *cxx;
	char *(*demangle)(const char *name, char *buf, size_t *len, int *status);
	bool cxx_tried;
};

int stacks_sym_new(struct stacks_sym **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	elf_version(EV_CURRENT);
	(*out)->tick = 1;
	return 0;
}

void stacks_sym_free(struct stacks_sym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n_mms; i++)
		free(s->mms[i].v);
	for (size_t i = 0; i < s->n_mods; i++) {
		free(s->mods[i].path);
		if (s->mods[i].fd >= 0)
			close(s->mods[i].fd);
		free(s->mods[i].syms);
		free(s->mods[i].strtab);
	}
	free(s->mms);
	free(s->mods);
	u64map_free(&s->index);
	if (s->cxx)
		dlclose(s->cxx);
	free(s);
}

void stacks_sym_tick(struct stacks_sym *s)
{
	s->tick++;
}

/* The GNU build-id of an open ELF, into m. */
static void read_build_id(Elf *elf, struct module *m)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID_TYPE && nh.n_namesz == 4 &&
			    !memcmp((char *)d->d_buf + name_off, "GNU", 4) && nh.n_descsz <= BUILD_ID_MAX) {
				memcpy(m->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
				m->build_id_len = nh.n_descsz;
				return;
			}
		}
	}
}

/* The module of a file mapping, by its path and inode. A deleted file is
 * read through /proc/PID/map_files (its mapping's own file; the kernel asks
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE), kept open until the end; when
 * that cannot be opened its frames are offsets only, since a file at its
 * path is not the one mapped. */
static int module_of(struct stacks_sym *s, const char *path, __u64 ino, const char *map_file)
{
	struct module *g, *m;
	Elf *elf;
	int fd;

	for (size_t i = 0; i < s->n_mods; i++)
		if (s->mods[i].ino == ino && !strcmp(s->mods[i].path, path))
			return (int)i;
	g = realloc(s->mods, (s->n_mods + 1) * sizeof(*g));
	if (!g)
		return -1;
	s->mods = g;
	m = &s->mods[s->n_mods];
	memset(m, 0, sizeof(*m));
	m->fd = -1;
	m->ino = ino;
	m->path = strdup(path);
	if (!m->path)
		return -1;
	/* The build-id now, while the file is the one mapped. */
	fd = open(map_file ? map_file : path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		elf = elf_begin(fd, ELF_C_READ, NULL);
		if (elf)
			read_build_id(elf, m);
		elf_end(elf);
	}
	if (map_file)
		m->fd = fd;
	else if (fd >= 0)
		close(fd);
	m->loaded = map_file && fd < 0;         /* no symbols: offsets */
	return (int)s->n_mods++;
}

#define DELETED " (deleted)"

/* The file to read a module's ELF from: the deleted one's kept fd, or its path. */
static int module_open(const struct module *m)
{
	return m->fd >= 0 ? m->fd : open(m->path, O_RDONLY | O_CLOEXEC);
}

static void module_close(const struct module *m, int fd)
{
	if (fd >= 0 && fd != m->fd)
		close(fd);
}

static void parse_maps_line(struct stacks_sym *s, struct mm_maps *mm, __u32 tgid, const char *line)
{
	unsigned long long start, end, off, ino = 0;
	char perms[8], path[4096] = "", map_file[96];
	struct mapping *g;
	int n = sscanf(line, "%llx-%llx %7s %llx %*s %llu %4095[^\n]", &start, &end, perms, &off, &ino, path);
	size_t len = strlen(path);
	bool deleted = len > strlen(DELETED) && !strcmp(path + len - strlen(DELETED), DELETED);

	if (n < 4)
		return;
	if (deleted)
		snprintf(map_file, sizeof(map_file), "/proc/%u/map_files/%llx-%llx", tgid, start, end);
	for (size_t i = 0; i < mm->n; i++)
		if (mm->v[i].start == start && mm->v[i].end == end)
			return;         /* read before */
	g = realloc(mm->v, (mm->n + 1) * sizeof(*g));
	if (!g)
		return;
	mm->v = g;
	g[mm->n++] = (struct mapping){ .start = start, .end = end, .off = off, .exec = perms[2] == 'x',
				       .module = path[0] == '/' ? module_of(s, path, ino, deleted ? map_file : NULL)
								: -1 };
}

static void read_maps(struct stacks_sym *s, struct mm_maps *mm, __u32 tgid)
{
	char path[64], line[4400];
	FILE *f;

	mm->read_tick = s->tick;
	snprintf(path, sizeof(path), "/proc/%u/comm", tgid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(mm->comm, sizeof(mm->comm), f))
			mm->comm[strcspn(mm->comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%u/maps", tgid);
	f = fopen(path, "re");
	if (!f)
		return;         /* gone: its frames stay as addresses */
	while (fgets(line, sizeof(line), f))
		parse_maps_line(s, mm, tgid, line);
	fclose(f);
}

static struct mm_maps *mm_of(const struct stacks_sym *s, __u64 mm)
{
	uint32_t *i = u64map_get(&s->index, mm);

	return i ? &s->mms[*i - 1] : NULL;
}

static const struct mapping *mapping_of(const struct mm_maps *mm, __u64 addr)
{
	/* The latest read first: a range unmapped and mapped again. */
	for (size_t i = mm->n; i-- > 0;)
		if (addr >= mm->v[i].start && addr < mm->v[i].end)
			return &mm->v[i];
	return NULL;
}

void stacks_sym_note(struct stacks_sym *s, __u64 mm, __u32 tgid, const __u64 *frames, __u32 n)
{
	struct mm_maps *m = mm_of(s, mm), *g;
	uint32_t *slot;
	bool missing = false;

	if (!m) {
		g = realloc(s->mms, (s->n_mms + 1) * sizeof(*g));
		if (!g)
			return;
		s->mms = g;
		if (!u64map_put(&s->index, mm, (uint32_t)s->n_mms + 1, &slot))
			return;
		m = &s->mms[s->n_mms++];
		memset(m, 0, sizeof(*m));
		strcpy(m->comm, "?");
		read_maps(s, m, tgid);
		return;
	}
	if (m->read_tick == s->tick)
		return;
	for (__u32 i = 0; i < n && !missing; i++)
		missing = !mapping_of(m, frames[i]);
	if (missing)
		read_maps(s, m, tgid);
}

const char *stacks_sym_comm(struct stacks_sym *s, __u64 mm)
{
	struct mm_maps *m = mm_of(s, mm);

	return m ? m->comm : "?";
}

bool stacks_sym_is_return(struct stacks_sym *s, __u64 mm, __u64 addr)
{
	const struct mm_maps *m = mm_of(s, mm);
	const struct mapping *map = m ? mapping_of(m, addr) : NULL;
	const struct module *mod;
	__u8 b[7];
	__u64 off;
	int fd;
	bool yes;

	if (!map || !map->exec || map->module < 0 || addr - map->start < sizeof(b))
		return false;
	off = addr - map->start + map->off;
	mod = &s->mods[map->module];
	fd = module_open(mod);
	if (fd < 0)
		return false;
	yes = pread(fd, b, sizeof(b), (off_t)(off - sizeof(b))) == (ssize_t)sizeof(b);
	module_close(mod, fd);
	/* call rel32; call *[rip+d32] or *d32(reg); call *reg (REX or not); call *d8(reg) */
	return yes && (b[2] == 0xe8 || (b[1] == 0xff && (b[2] == 0x15 || (b[2] & 0xf8) == 0x90)) ||
		       (b[5] == 0xff && (b[6] & 0xf8) == 0xd0) || (b[4] == 0xff && (b[5] & 0xf8) == 0x50));
}

__u32 stacks_sym_chain(struct stacks_sym *s, __u64 mm, const __u64 *frames, __u32 n)
{
	const struct mm_maps *m = mm_of(s, mm);
	const struct mapping *map;

	for (__u32 i = 1; m && i < n; i++)
		if (!(map = mapping_of(m, frames[i])) || !map->exec)
			return i;
	return n;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The functions of one symbol table section, appended to m's. */
static void read_symtab(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct module *m)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0, names = 0, used = 0;
	GElf_Sym sym;

	if (!d || !n)
		return;
	for (size_t i = 0; i < n; i++)
		if (gelf_getsym(d, (int)i, &sym) && GELF_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_value)
			names += strlen(elf_strptr(elf, sh->sh_link, sym.st_name) ?: "") + 1;
	m->syms = calloc(n, sizeof(*m->syms));
	m->strtab = malloc(names + 1);
	if (!m->syms || !m->strtab)
		return;
	for (size_t i = 0; i < n; i++) {
		const char *name;

		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name) ?: "";
		strcpy(m->strtab + used, name);
		m->syms[m->n_syms++] = (struct sym){ sym.st_value, sym.st_size, m->strtab + used };
		used += strlen(name) + 1;
	}
	qsort(m->syms, m->n_syms, sizeof(*m->syms), sym_cmp);
}

/* The module's symbols, once: .symtab, else .dynsym; only when the file
 * at its path has the build-id it had at capture. */
static void load_module(struct module *m)
{
	struct module now = { 0 };
	Elf_Scn *scn = NULL, *dyn = NULL;
	GElf_Shdr sh, dynsh;
	size_t nph = 0;
	Elf *elf;
	int fd;

	m->loaded = true;
	fd = module_open(m);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf)
		read_build_id(elf, &now);
	if (!elf || now.build_id_len != m->build_id_len ||
	    memcmp(now.build_id, m->build_id, m->build_id_len) || elf_getphdrnum(elf, &nph))
		goto cleanup;
	for (size_t i = 0; i < nph && m->n_loads < 16; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			m->loads[m->n_loads++] = (typeof(m->loads[0])){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
	}
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			break;
		if (sh.sh_type == SHT_DYNSYM) {
			dyn = scn;
			dynsh = sh;
		}
	}
	if (scn)
		read_symtab(elf, scn, &sh, m);
	else if (dyn)
		read_symtab(elf, dyn, &dynsh, m);
cleanup:
	elf_end(elf);
	module_close(m, fd);
}

static const char *symbol_at(struct module *m, __u64 off)
{
	__u64 vaddr = 0;
	size_t lo = 0, hi;
	bool in = false;

	if (!m->loaded)
		load_module(m);
	for (size_t i = 0; i < m->n_loads && !in; i++) {
		in = off >= m->loads[i].offset && off < m->loads[i].offset + m->loads[i].filesz;
		vaddr = off - m->loads[i].offset + m->loads[i].vaddr;
	}
	if (!in || !m->n_syms)
		return NULL;
	hi = m->n_syms;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (m->syms[mid].addr <= vaddr)
			lo = mid;
		else
			hi = mid;
	}
	if (m->syms[lo].addr > vaddr || (m->syms[lo].size && vaddr >= m->syms[lo].addr + m->syms[lo].size))
		return NULL;
	return m->syms[lo].name;
}

/*
 * A C++ name ("_Z..."), demangled into buf by libstdc++'s __cxa_demangle
 * (the Itanium C++ ABI's, the one g++ and clang++ emit), from the system's
 * libstdc++.so.6 (Debian's libstdc++6, which its C++ programs run with),
 * opened at the first such name: no build dependency, and nothing loaded
 * for C programs. Without it, or for a name it refuses, the name stays
 * mangled.
 */
static bool demangle(struct stacks_sym *s, const char *name, char *buf, size_t len)
{
	char *d;
	int status = -1;
	bool ok;

	if (name[0] != '_' || name[1] != 'Z')
		return false;
	if (!s->cxx_tried) {
		s->cxx_tried = true;
		s->cxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (s->cxx)
			*(void **)&s->demangle = dlsym(s->cxx, "__cxa_demangle");
	}
	d = s->demangle ? s->demangle(name, NULL, NULL, &status) : NULL;
	ok = d && !status;
	if (ok)
		snprintf(buf, len, "%s", d);
	free(d);
	return ok;
}

bool stacks_sym_name(struct stacks_sym *s, __u64 mm, __u64 addr, char *buf, size_t len)
{
	const struct mm_maps *m = mm_of(s, mm);
	const struct mapping *map = m ? mapping_of(m, addr) : NULL;
	const char *name, *base;
	__u64 off;

	if (!map || map->module < 0) {
		snprintf(buf, len, "0x%" PRIx64, (uint64_t)addr);
		return false;
	}
	off = addr - map->start + map->off;
	name = symbol_at(&s->mods[map->module], off);
	if (name && *name) {
		if (!demangle(s, name, buf, len))
			snprintf(buf, len, "%s", name);
		return true;
	}
	base = strrchr(s->mods[map->module].path, '/');
	snprintf(buf, len, "%s+0x%" PRIx64, base ? base + 1 : s->mods[map->module].path, (uint64_t)off);
	return false;
}
