/* unrecorded_insns (include/ptrev/unrecorded_insns.h): the instructions
 * an event recording cannot hold, counted in bytes, and the note a
 * replay that went differently gives, over a made-up recording whose one
 * executable mapping comes from its copy of a file that no longer
 * exists (no build-id: the copy is certain). */
#include <string.h>
#include <sys/mman.h>

#include "../check.h"
#include "ptrev/unrecorded_insns.h"

/* rdrand eax; rdseed rax (REX.W); rdpid rax (F3); cmpxchg8b [rax] and
 * vmptrld [rax] (0F C7 with a memory operand: not such); rdrand at the
 * very end. */
static const unsigned char code[] = {
	0x0f, 0xc7, 0xf0,
	0x48, 0x0f, 0xc7, 0xf8,
	0xf3, 0x0f, 0xc7, 0xf8,
	0x0f, 0xc7, 0x08,
	0x0f, 0xc7, 0x30,
	0x90, 0x0f, 0xc7, 0xf1,
};

int main(void)
{
	CHECK(unrecorded_insns_count(code, sizeof code) == 4);
	CHECK(unrecorded_insns_count(code, sizeof code - 1) == 3); /* cut inside the last */
	CHECK(unrecorded_insns_count(code + 11, 6) == 0);

	static struct trace_mmap maps[2];
	maps[0] = (struct trace_mmap){.start = 0x400000, .end = 0x400000 + sizeof code,
				      .prot = PROT_READ | PROT_EXEC};
	strcpy(maps[0].path, "/nonexistent/ptrev-test/libfake.so");
	maps[1] = maps[0]; /* the same file mapped again: counted once */
	struct trace_file_copy copy = {.path = maps[0].path, .size = sizeof code, .bytes = code,
				       .len = sizeof code};
	struct trace_data td = {.nmmaps = 2, .mmaps = maps, .nfiles = 1, .files = &copy};
	char note[512];
	size_t n = unrecorded_insns_note(&td, note, sizeof note);
	CHECK(n == strlen(note));
	CHECK(strstr(note, "rdrand, rdseed or rdpid (libfake.so: 4)") != NULL, "%s", note);
	CHECK(strstr(note, "a replay that runs one goes differently") != NULL);

	/* Not executable, or no such bytes: no note. */
	maps[0].prot = maps[1].prot = PROT_READ;
	CHECK(unrecorded_insns_note(&td, note, sizeof note) == 0 && note[0] == 0);
	maps[0].prot = maps[1].prot = PROT_READ | PROT_EXEC;
	copy.bytes = code + 11;
	copy.size = copy.len = 6;
	maps[0].end = maps[1].end = 0x400006;
	CHECK(unrecorded_insns_note(&td, note, sizeof note) == 0);

	/* A short buffer: cut, still a string. */
	copy.bytes = code;
	copy.size = copy.len = sizeof code;
	maps[0].end = maps[1].end = 0x400000 + sizeof code;
	n = unrecorded_insns_note(&td, note, 20);
	CHECK(n < 20 && strlen(note) == n);
	printf("%s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
