/* Tests of the pass model (replay/pass_model.c): a loop counter and a
 * pointer stepping together predict the passes left; an accumulator that
 * changes otherwise says nothing against it; too few passes, an
 * invariant that differs from the target, a target behind or between two
 * passes, counters that disagree give no prediction; a jump is read from
 * the counters when they agree, refused when they do not (the model left
 * as it was); eflags and orig_rax are left out; a counter kept on the
 * stack predicts as a register does. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/user.h>

#include "ptrev/pass_model.h"
#include "../check.h"

/* The registers of a loop at pass i: rcx counts up, rdi walks an array
 * of 8-byte words down, rax is a hash, rbx an invariant, eflags and
 * orig_rax noise. */
static struct user_regs_struct at(uint64_t i)
{
	struct user_regs_struct r;
	memset(&r, 0, sizeof r);
	r.rip = 0x401000;
	r.rcx = 100 + i;
	r.rdi = 0x7f0000 - 8 * i;
	r.rax = (i * 0x9e3779b97f4a7c15ull) ^ (i >> 3);
	r.rbx = 42;
	r.eflags = 0x202 | (i & 1 ? 0x40 : 0);
	r.orig_rax = i * 7;
	return r;
}

/* The model's words for regs, with a stack whose word 3 counts down by
 * 3 from 9000 (a counter in memory, as unoptimised code keeps it) at
 * stack pass sp, and whose other words stay. */
static const uint64_t *words(const struct user_regs_struct *r, uint64_t sp)
{
	static uint64_t w[PASS_MODEL_WORDS];
	memset(w, 0, sizeof w);
	memcpy(w, r, sizeof *r);
	for (size_t i = 0; i < PASS_MODEL_STACK; i++)
		w[PASS_MODEL_REGS + i] = 0x1111 * i;
	w[PASS_MODEL_REGS + 3] = 9000 - 3 * sp;
	return w;
}

static void feed(struct pass_model *m, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++) {
		struct user_regs_struct r = at(i);
		pass_model_feed(m, words(&r, i));
	}
}

static uint64_t left(const struct pass_model *m, const struct user_regs_struct *t, uint64_t sp)
{
	uint64_t w[PASS_MODEL_WORDS];
	memcpy(w, words(t, sp), sizeof w);
	return pass_model_left(m, w);
}

static uint64_t jump(struct pass_model *m, const struct user_regs_struct *r, uint64_t sp)
{
	uint64_t w[PASS_MODEL_WORDS];
	memcpy(w, words(r, sp), sizeof w);
	return pass_model_jump(m, w);
}

int main(void)
{
	struct pass_model m;
	struct user_regs_struct target = at(1000000);

	/* Too few passes seen: no prediction. */
	pass_model_init(&m);
	feed(&m, 0, PASS_MODEL_SAMPLES);
	CHECK(left(&m, &target, 1000000) == 0);
	/* Enough: the passes from the last one fed (pass 99) to 1,000,000. */
	feed(&m, PASS_MODEL_SAMPLES, 100);
	CHECK(left(&m, &target, 1000000) == 1000000 - 99, "%llu",
	      (unsigned long long)left(&m, &target, 1000000));

	/* An invariant that is not the target's: the point is not in this
	 * loop (an outer loop's register, say). */
	struct user_regs_struct other = target;
	other.rbx = 43;
	CHECK(left(&m, &other, 1000000) == 0);
	/* Counters that disagree, a target between two passes, one behind. */
	other = target;
	other.rdi += 8;
	CHECK(left(&m, &other, 1000000) == 0);
	other = target;
	other.rdi -= 4;
	other.rcx = target.rcx;
	CHECK(left(&m, &other, 1000000) == 0);
	struct user_regs_struct behind = at(50);
	CHECK(left(&m, &behind, 50) == 0);
	/* The hash and the noise do not count against it. */
	other = target;
	other.rax ^= 1;
	other.eflags ^= 0x41;
	other.orig_rax = 5;
	CHECK(left(&m, &other, 1000000) == 1000000 - 99);

	/* A jump ahead is read from the counters. */
	struct user_regs_struct r = at(5099);
	CHECK(jump(&m, &r, 5099) == 5000);
	CHECK(left(&m, &target, 1000000) == 1000000 - 5099);
	/* The next pass is fed as usual, and still predicts. */
	r = at(5100);
	pass_model_feed(&m, words(&r, 5100));
	CHECK(left(&m, &target, 1000000) == 1000000 - 5100);
	/* Counters that do not agree after a jump, or that went back: refused,
	 * nothing changed. */
	r = at(6000);
	r.rdi += 8;
	CHECK(jump(&m, &r, 6000) == 0);
	r = at(4000);
	CHECK(jump(&m, &r, 4000) == 0);
	r = at(6000);
	r.rbx = 1;
	CHECK(jump(&m, &r, 6000) == 0);
	r = at(6000);
	CHECK(jump(&m, &r, 6001) == 0, "the counter in memory disagrees");
	CHECK(left(&m, &target, 1000000) == 1000000 - 5100);

	/* A register whose step changes (a new loop) is not predicted until
	 * it has kept its new step long enough: the counter restarted with
	 * step 2 says nothing for a while, then predicts. */
	pass_model_init(&m);
	feed(&m, 0, 40);
	for (uint64_t i = 0; i < PASS_MODEL_SAMPLES / 2; i++) {
		struct user_regs_struct q = at(40 + i);
		q.rcx = 7 + 2 * i;
		q.rdi = 0x7e0000 - 8 * i;
		pass_model_feed(&m, words(&q, 0));
	}
	struct user_regs_struct t2 = at(0);
	t2.rcx = 7 + 2 * 1000;
	t2.rdi = 0x7e0000 - 8 * 1000;
	CHECK(left(&m, &t2, 0) == 0);
	for (uint64_t i = PASS_MODEL_SAMPLES / 2; i < 2 * PASS_MODEL_SAMPLES; i++) {
		struct user_regs_struct q = at(40 + i);
		q.rcx = 7 + 2 * i;
		q.rdi = 0x7e0000 - 8 * i;
		pass_model_feed(&m, words(&q, 0));
	}
	CHECK(left(&m, &t2, 0) == 1000 - (2 * PASS_MODEL_SAMPLES - 1), "%llu",
	      (unsigned long long)left(&m, &t2, 0));

	/* No register that steps, every invariant the target's: nothing to
	 * predict by. */
	pass_model_init(&m);
	for (int i = 0; i < 40; i++) {
		struct user_regs_struct q = at(0);
		q.rax = (uint64_t)i * i * 31;
		pass_model_feed(&m, words(&q, 0));
	}
	struct user_regs_struct same = at(0);
	same.rax = 12345;
	CHECK(left(&m, &same, 0) == 0);
	/* ...but a counter in memory is enough (code compiled without
	 * optimisation). */
	pass_model_init(&m);
	for (uint64_t i = 0; i < 40; i++) {
		struct user_regs_struct q = at(0);
		q.rax = i * i * 31;
		pass_model_feed(&m, words(&q, i));
	}
	CHECK(left(&m, &same, 1000) == 1000 - 39, "%llu", (unsigned long long)left(&m, &same, 1000));
	return failures != 0;
}
