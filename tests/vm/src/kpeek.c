// SPDX-License-Identifier: GPL-2.0
/*
 * Read kernel memory through /proc/kcore, for VM cases that look at code
 * as the kernel left it after loading a module (e.g. a sealed ENDBR):
 *
 *   kpeek SYMBOL [N]     N bytes (default 4) at SYMBOL, from /proc/kallsyms
 *   kpeek 0xADDR [N]
 *
 * Prints the address and the bytes in hex ("ffffffffc0318e20 f3 0f 1e fa").
 * Exit status 0, or 1 if the symbol or the address is not found.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static unsigned long lookup(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512], sym[256], type;
	unsigned long addr, found = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx %c %255s", &addr, &type, sym) == 3 && !strcmp(sym, name)) {
			found = addr;
			break;
		}
	}
	fclose(f);
	return found;
}

int main(int argc, char **argv)
{
	unsigned long addr, n = argc > 2 ? strtoul(argv[2], NULL, 0) : 4;
	unsigned char buf[64];
	Elf64_Ehdr eh;
	int fd, i;

	if (argc < 2 || n == 0 || n > sizeof(buf)) {
		fprintf(stderr, "usage: kpeek SYMBOL|0xADDR [N<=64]\n");
		return 2;
	}
	addr = strncmp(argv[1], "0x", 2) ? lookup(argv[1]) : strtoul(argv[1], NULL, 16);
	if (!addr) {
		fprintf(stderr, "kpeek: %s: not in /proc/kallsyms (or addresses hidden)\n", argv[1]);
		return 1;
	}
	fd = open("/proc/kcore", O_RDONLY);
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh)) {
		perror("kpeek: /proc/kcore");
		return 1;
	}
	for (i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof(ph))
			break;
		if (ph.p_type != PT_LOAD || addr < ph.p_vaddr || addr + n > ph.p_vaddr + ph.p_memsz)
			continue;
		if (pread(fd, buf, n, ph.p_offset + (addr - ph.p_vaddr)) != (ssize_t)n) {
			perror("kpeek: read");
			return 1;
		}
		printf("%lx", addr);
		for (unsigned long j = 0; j < n; j++)
			printf(" %02x", buf[j]);
		printf("\n");
		return 0;
	}
	fprintf(stderr, "kpeek: %lx: in no /proc/kcore segment\n", addr);
	return 1;
}
