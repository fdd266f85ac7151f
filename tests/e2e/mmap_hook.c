// SPDX-License-Identifier: BSD-2-Clause
/*
 * libe2e_mmap_hook.so: memory hooks as UCX installs them, for host_rules.
 * Loaded with dlopen() after the sim's preload, it rewrites the GOT slots
 * of mmap and munmap in the loaded objects whose name holds a given
 * string (the provider) to its own functions, which reach libc's mmap and
 * munmap with dlsym(RTLD_NEXT) from here, past the preload, or, "raw",
 * issue syscall(SYS_mmap/SYS_munmap).
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);

static mmap_fn next_mmap;
static munmap_fn next_munmap;
static int hook_raw;

static void *hook_mmap(void *addr, size_t len, int prot, int flags, int fd,
		       off_t off)
{
	if (hook_raw)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
				       off);
	return next_mmap(addr, len, prot, flags, fd, off);
}

static int hook_munmap(void *addr, size_t len)
{
	if (hook_raw)
		return (int)syscall(SYS_munmap, addr, len);
	return next_munmap(addr, len);
}

struct patch {
	const char *object;
	int patched;
};

/* A dynamic entry's address: ld.so relocates most of them in place. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, uintptr_t v)
{
	return v < info->dlpi_addr ? v + info->dlpi_addr : v;
}

static void patch_relocs(const struct dl_phdr_info *info,
			 const ElfW(Rela) *rel, size_t size,
			 const ElfW(Sym) *symtab, const char *strtab,
			 struct patch *p)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t i;

	for (i = 0; rel && i < size / sizeof(*rel); i++) {
		const char *name =
			strtab + symtab[ELF64_R_SYM(rel[i].r_info)].st_name;
		void **slot = (void **)(info->dlpi_addr + rel[i].r_offset);
		void *to;

		if (!strcmp(name, "mmap") || !strcmp(name, "mmap64"))
			to = (void *)hook_mmap;
		else if (!strcmp(name, "munmap"))
			to = (void *)hook_munmap;
		else
			continue;
		/* The GOT may be read-only after relocation (RELRO). */
		mprotect((void *)((uintptr_t)slot & ~(uintptr_t)(page - 1)),
			 (size_t)page, PROT_READ | PROT_WRITE);
		*slot = to;
		p->patched++;
	}
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct patch *p = arg;
	const ElfW(Dyn) *dyn = NULL;
	const ElfW(Rela) *jmprel = NULL, *rela = NULL;
	const ElfW(Sym) *symtab = NULL;
	const char *strtab = NULL;
	size_t jmprel_size = 0, rela_size = 0;
	int i;

	if (!info->dlpi_name || !strstr(info->dlpi_name, p->object))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr +
						  info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_JMPREL:
			jmprel = (const void *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_PLTRELSZ:
			jmprel_size = dyn->d_un.d_val;
			break;
		case DT_RELA:
			rela = (const void *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_RELASZ:
			rela_size = dyn->d_un.d_val;
			break;
		case DT_SYMTAB:
			symtab = (const void *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB:
			strtab = (const void *)dyn_addr(info, dyn->d_un.d_ptr);
			break;
		}
	}
	if (!symtab || !strtab)
		return 0;
	patch_relocs(info, jmprel, jmprel_size, symtab, strtab, p);
	patch_relocs(info, rela, rela_size, symtab, strtab, p);
	return 0;
}

int e2e_mmap_hook_install(const char *object, int raw);
int e2e_mmap_hook_install(const char *object, int raw)
{
	struct patch p = { .object = object };

	next_mmap = (mmap_fn)dlsym(RTLD_NEXT, "mmap");
	next_munmap = (munmap_fn)dlsym(RTLD_NEXT, "munmap");
	if (!next_mmap || !next_munmap)
		return -1;
	hook_raw = raw;
	dl_iterate_phdr(patch_object, &p);
	return p.patched;
}
