/* insn_class: hand-picked encodings of every kind, checked for length, kind
 * and direct-branch target; invalid bytes must be an error. */
#include "ptrev/insn_class.h"

#include <stdio.h>
#include <string.h>

static int failures;

struct vec {
	const char *hex;       /* instruction bytes */
	const char *what;      /* assembly, for messages */
	int len;               /* expected length, 0: expect an error */
	enum insn_kind kind;
	uint64_t target;       /* expected target for direct branches */
};

#define IP 0x401000ull

static const struct vec vecs[] = {
	{"90", "nop", 1, INSN_OTHER, 0},
	{"4889e5", "mov rbp, rsp", 3, INSN_OTHER, 0},
	{"0f0b", "ud2", 2, INSN_OTHER, 0},
	{"f4", "hlt", 1, INSN_OTHER, 0},
	{"c7f800000000", "xbegin +0", 6, INSN_OTHER, 0},
	/* AVX-512 (EVEX) and friends must decode. */
	{"62f1754ffec2", "vpaddd zmm0{k7}, zmm1, zmm2", 6, INSN_OTHER, 0},
	{"62f1754efec2", "vpaddd zmm0{k6}, zmm1, zmm2", 6, INSN_OTHER, 0},
	{"62f17549fec2", "vpaddd zmm0{k1}, zmm1, zmm2", 6, INSN_OTHER, 0},
	{"62f27d48588c2400010000", "vpbroadcastd zmm1, [rsp+0x100]", 11,
	 INSN_OTHER, 0},
	{"c5fd6fc1", "vmovdqa ymm0, ymm1 (VEX)", 4, INSN_OTHER, 0},
	/* 15 bytes: the architectural maximum. */
	{"2667f0488184807856341278563412",
	 "lock add qword es:[eax+eax*4+0x12345678], 0x12345678", 15,
	 INSN_OTHER, 0},
	{"2e2e2e2e2e2e2e2e2e2e2e2e2e2e90", "14 prefixes + nop", 15,
	 INSN_OTHER, 0},
	/* Conditional branches. */
	{"74fe", "jz $", 2, INSN_COND, IP},
	{"7510", "jnz +0x10", 2, INSN_COND, IP + 2 + 0x10},
	{"0f84faffffff", "jz rel32 $", 6, INSN_COND, IP},
	{"0f8f00010000", "jg rel32 +0x100", 6, INSN_COND, IP + 6 + 0x100},
	{"e305", "jrcxz +5", 2, INSN_COND, IP + 7},
	{"67e305", "jecxz +5", 3, INSN_COND, IP + 8},
	{"e2fe", "loop $", 2, INSN_COND, IP},
	{"e1f0", "loope -16", 2, INSN_COND, IP + 2 - 16},
	{"e0f0", "loopne -16", 2, INSN_COND, IP + 2 - 16},
	/* Direct near jumps and calls. */
	{"ebfe", "jmp $", 2, INSN_JMP, IP},
	{"e900100000", "jmp +0x1000", 5, INSN_JMP, IP + 5 + 0x1000},
	{"e800000000", "call next", 5, INSN_CALL, IP + 5},
	{"e8f6efffff", "call -0x100a", 5, INSN_CALL, IP + 5 - 0x100a},
	{"f2e800000000", "bnd call next", 6, INSN_CALL, IP + 6},
	/* Indirect near branches. */
	{"ffe0", "jmp rax", 2, INSN_JMP_IND, 0},
	{"41ffe3", "jmp r11", 3, INSN_JMP_IND, 0},
	{"3effe0", "notrack jmp rax", 3, INSN_JMP_IND, 0},
	{"ff24c500104000", "jmp [rax*8+0x401000]", 7, INSN_JMP_IND, 0},
	{"ff2500000000", "jmp [rip+0]", 6, INSN_JMP_IND, 0},
	{"ffd0", "call rax", 2, INSN_CALL_IND, 0},
	{"ff1510000000", "call [rip+0x10]", 6, INSN_CALL_IND, 0},
	{"41ff5408f8", "call [r8+rcx-8]", 5, INSN_CALL_IND, 0},
	/* Near returns. */
	{"c3", "ret", 1, INSN_RET, 0},
	{"f3c3", "rep ret", 2, INSN_RET, 0},
	{"c20800", "ret 8", 3, INSN_RET, 0},
	/* Far transfers. */
	{"cb", "retf", 1, INSN_FAR, 0},
	{"ca0800", "retf 8", 3, INSN_FAR, 0},
	{"48cf", "iretq", 2, INSN_FAR, 0},
	{"ff1d00000000", "call far [rip+0]", 6, INSN_FAR, 0},
	{"ff2d00000000", "jmp far [rip+0]", 6, INSN_FAR, 0},
	{"0f07", "sysret", 2, INSN_FAR, 0},
	/* Kernel entries. */
	{"0f05", "syscall", 2, INSN_SYSCALL, 0},
	{"0f34", "sysenter", 2, INSN_SYSCALL, 0},
	{"cd80", "int 0x80", 2, INSN_INT, 0},
	{"cc", "int3", 1, INSN_INT, 0},
	{"f1", "int1", 1, INSN_INT, 0},
	/* Not instructions: errors, never guesses. */
	{"06", "push es (invalid in 64-bit)", 0, 0, 0},
	{"ce", "into (invalid in 64-bit)", 0, 0, 0},
	{"0fff", "ud0 without modrm", 0, 0, 0},
	{"2e2e2e2e2e2e2e2e2e2e2e2e2e2e2e90", "16 bytes", 0, 0, 0},
	{"26", "lone prefix", 0, 0, 0},
	{"e8000000", "truncated call", 0, 0, 0},
	{"62", "truncated EVEX", 0, 0, 0},
	{"0f3f", "undefined 0f 3f", 0, 0, 0},
};

static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	while (hex[0] && hex[1] && n < max) {
		unsigned v;
		sscanf(hex, "%2x", &v);
		out[n++] = (uint8_t)v;
		hex += 2;
	}
	return n;
}

static void check(const struct vec *v)
{
	uint8_t code[32];
	size_t n = unhex(v->hex, code, sizeof code);
	struct insn_info info;
	int rc;

	memset(&info, 0xa5, sizeof info);
	rc = insn_classify(code, n, IP, &info);
	if (v->len == 0) {
		if (rc == 0) {
			printf("FAIL %s (%s): decoded (len %u, %s), expected an "
			       "error\n", v->hex, v->what, info.len,
			       insn_kind_name(info.kind));
			failures++;
		}
		return;
	}
	if (rc != 0) {
		printf("FAIL %s (%s): error, expected len %d %s\n", v->hex,
		       v->what, v->len, insn_kind_name(v->kind));
		failures++;
		return;
	}
	if (info.len != v->len || info.kind != v->kind ||
	    info.target != v->target) {
		printf("FAIL %s (%s): got len %u %s target %#llx, expected len "
		       "%d %s target %#llx\n", v->hex, v->what, info.len,
		       insn_kind_name(info.kind),
		       (unsigned long long)info.target, v->len,
		       insn_kind_name(v->kind),
		       (unsigned long long)v->target);
		failures++;
	}
}

int main(void)
{
	uint8_t big[32];
	struct insn_info info;

	for (size_t i = 0; i < sizeof vecs / sizeof vecs[0]; i++)
		check(&vecs[i]);

	/* A longer buffer than the instruction: only the instruction counts. */
	memset(big, 0x90, sizeof big);
	big[0] = 0xc3;
	if (insn_classify(big, sizeof big, IP, &info) != 0 || info.len != 1 ||
	    info.kind != INSN_RET) {
		printf("FAIL ret followed by nops\n");
		failures++;
	}
	/* Empty input is an error. */
	if (insn_classify(big, 0, IP, &info) == 0) {
		printf("FAIL empty buffer decoded\n");
		failures++;
	}
	/* Targets wrap like the CPU's 64-bit IP arithmetic. */
	{
		const uint8_t jmp[] = {0xeb, 0x10};
		if (insn_classify(jmp, 2, ~0ull - 5, &info) != 0 ||
		    info.target != 0xcull) {
			printf("FAIL wrap-around target %#llx\n",
			       (unsigned long long)info.target);
			failures++;
		}
	}
	/* REP string instructions are told apart from other F2/F3 uses. */
	{
		static const struct {
			const char *hex, *what;
			bool rep;
		} reps[] = {
			{"f3a4", "rep movsb", true},       {"f348ab", "rep stosq", true},
			{"f3a6", "repe cmpsb", true},      {"f2ae", "repne scasb", true},
			{"a4", "movsb", false},            {"f3c3", "rep ret", false},
			{"f30fb8c1", "popcnt eax, ecx", false}, {"f2e800000000", "bnd call", false},
			{"f30f1efa", "endbr64", false},    {"90", "nop", false},
		};
		for (size_t i = 0; i < sizeof reps / sizeof reps[0]; i++) {
			uint8_t code[16];
			size_t n = unhex(reps[i].hex, code, sizeof code);
			if (insn_classify(code, n, IP, &info) != 0 || info.rep != reps[i].rep) {
				printf("FAIL %s: rep %d, expected %d\n", reps[i].what, info.rep,
				       reps[i].rep);
				failures++;
			}
		}
	}
	if (failures) {
		printf("%d failure(s)\n", failures);
		return 1;
	}
	printf("insn_class: %zu vectors ok\n", sizeof vecs / sizeof vecs[0]);
	return 0;
}
