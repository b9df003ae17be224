/* Tests of the pass model (replay/pass_model.c): a loop counter and a
 * pointer stepping together predict the passes left; an accumulator that
 * changes otherwise says nothing against it; too few passes, an
 * invariant that differs from the target, a target behind or between two
 * passes, counters that disagree give no prediction; a jump is read from
 * the counters when they agree, refused when they do not (the model left
 * as it was); eflags and orig_rax are left out; a counter kept on the
 * stack predicts as a register does, and so does one in half of a stack
 * word (the other half changing otherwise); a 64-bit counter speaks as a
 * whole, its carry into the high half no changed invariant. Where no
 * lane steps evenly, a lane that rises at every pass gives an estimate
 * (pass_model_rough_left), and a jump is taken on it only while that lane
 * grew and is still below the target's, the invariants unchanged. */
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

	/* A counter in one half of a stack word, a value that changes
	 * otherwise in the other (two ints of unoptimised code side by side:
	 * rec_loop's i and x): the half predicts, in either half. */
	for (int high = 0; high < 2; high++) {
		pass_model_init(&m);
		uint64_t w[PASS_MODEL_WORDS];
		for (uint64_t i = 0; i < 40; i++) {
			struct user_regs_struct q = at(0);
			q.rax = i * i * 31;
			memcpy(w, words(&q, 0), sizeof w);
			uint64_t hash = (i * i * 0x9e3779b9u ^ i >> 1) & 0xffffffffu;
			w[PASS_MODEL_REGS + 5] = high ? (100 + i) << 32 | hash : hash << 32 | (100 + i);
			pass_model_feed(&m, w);
		}
		memcpy(w, words(&same, 0), sizeof w);
		w[PASS_MODEL_REGS + 5] = high ? (uint64_t)5000 << 32 | 77 : (uint64_t)77 << 32 | 5000;
		CHECK(pass_model_left(&m, w) == 5000 - 139, "half %d: %llu", high,
		      (unsigned long long)pass_model_left(&m, w));
	}
	/* A sum that grows unevenly: its high half stays the same for
	 * billions of passes, and is no invariant the point must share
	 * (live_wait's spins, far ahead). */
	pass_model_init(&m);
	uint64_t sum = 0x1234;
	for (uint64_t i = 0; i < 40; i++) {
		struct user_regs_struct q = at(0);
		q.rax = i * i * 31;
		q.r12 = i;
		q.r14 = sum += i * i % 7;
		pass_model_feed(&m, words(&q, 0));
	}
	struct user_regs_struct later = same;
	later.r12 = 39 + 3000000000ull;
	later.r14 = 0x5678ull << 32 | 99;
	CHECK(left(&m, &later, 0) == 3000000000ull, "%llu", (unsigned long long)left(&m, &later, 0));
	/* A 64-bit counter speaks as a whole: its high half, invariant for
	 * a while, changes with a carry, which does not count against it. */
	pass_model_init(&m);
	for (uint64_t i = 0; i < 40; i++) {
		struct user_regs_struct q = at(0);
		q.rax = i * i * 31;
		q.r12 = 0xfffffff0ull + i;
		pass_model_feed(&m, words(&q, 0));
	}
	struct user_regs_struct far = same;
	far.r12 = 0xfffffff0ull + 39 + 1000;
	CHECK(left(&m, &far, 0) == 1000, "%llu", (unsigned long long)left(&m, &far, 0));

	/* A PC in a function a loop calls now and then (rec_loop's f0): no
	 * lane steps evenly, the caller's counter grows by 1 to 3 between
	 * passes. No count, but an estimate from the rising half. */
	pass_model_init(&m);
	uint64_t w[PASS_MODEL_WORDS], tw[PASS_MODEL_WORDS];
	uint64_t i = 0;
	for (int p = 0; p < PASS_MODEL_RISING + 8; p++) {
		i += 1 + (uint64_t)(p * p % 3); /* uneven: 1, 2, 2, ... */
		struct user_regs_struct q = at(0);
		q.rax = at(i).rax; /* a hash: no lane of it rises for long */
		memcpy(w, words(&q, 0), sizeof w);
		w[PASS_MODEL_REGS + 7] = (i * i * 0x9e3779b9u & 0xffffffffu) << 32 | i;
		pass_model_feed(&m, w);
	}
	struct user_regs_struct tq = same;
	memcpy(tw, words(&tq, 0), sizeof tw);
	tw[PASS_MODEL_REGS + 7] = (uint64_t)77 << 32 | (i + 20000);
	CHECK(pass_model_left(&m, tw) == 0, "no count");
	uint64_t est = pass_model_rough_left(&m, tw);
	CHECK(est >= 11000 && est <= 13000, "an estimate of 12,000 passes: %llu",
	      (unsigned long long)est);
	/* Not with an invariant that differs, or the target behind. */
	tw[PASS_MODEL_REGS + 2] ^= 1;
	CHECK(pass_model_rough_left(&m, tw) == 0, "an invariant differs");
	tw[PASS_MODEL_REGS + 2] ^= 1;
	tw[PASS_MODEL_REGS + 7] = (uint64_t)77 << 32 | (i - 5);
	CHECK(pass_model_rough_left(&m, tw) == 0, "behind");
	tw[PASS_MODEL_REGS + 7] = (uint64_t)77 << 32 | (i + 20000);
	/* A jump: taken where the counter grew and is still below the
	 * target's, refused where it reached it or went back (nothing
	 * changed), or an invariant changed. */
	memcpy(w, words(&same, 0), sizeof w);
	w[PASS_MODEL_REGS + 7] = (uint64_t)5 << 32 | (i + 20000);
	CHECK(pass_model_rough_jump(&m, w, tw) == 0, "reached the target");
	w[PASS_MODEL_REGS + 7] = (uint64_t)5 << 32 | (i - 1);
	CHECK(pass_model_rough_jump(&m, w, tw) == 0, "went back");
	w[PASS_MODEL_REGS + 7] = (uint64_t)5 << 32 | (i + 10000);
	w[PASS_MODEL_REGS + 2] ^= 1;
	CHECK(pass_model_rough_jump(&m, w, tw) == 0, "an invariant changed");
	w[PASS_MODEL_REGS + 2] ^= 1;
	uint64_t made = pass_model_rough_jump(&m, w, tw);
	CHECK(made >= 5000 && made <= 7000, "about 6,000 passes made: %llu",
	      (unsigned long long)made);
	est = pass_model_rough_left(&m, tw);
	CHECK(est >= 5000 && est <= 7000, "about 6,000 left: %llu", (unsigned long long)est);
	/* Counted on from there: not past the point while the counter is
	 * below its value or at it, past once it is above. */
	CHECK(!pass_model_rough_passed(&m, tw), "below");
	for (uint64_t c = i + 19999; c <= i + 20001; c++) {
		w[PASS_MODEL_REGS + 7] = (uint64_t)(c * 13 % 7) << 32 | c;
		pass_model_feed(&m, w);
		CHECK(pass_model_rough_passed(&m, tw) == (c > i + 20000), "at %llu",
		      (unsigned long long)(c - i));
	}
	/* A value that only grows now and then is no rising lane. */
	pass_model_init(&m);
	for (uint64_t p = 0; p < 200; p++) {
		struct user_regs_struct q = at(0);
		q.rax = p * p * 31;
		q.r13 = p / 2 + (p % 7 == 0 ? 1000 : 0); /* flat, now and then back */
		pass_model_feed(&m, words(&q, 0));
	}
	far = same;
	far.r13 = 5000;
	CHECK(pass_model_rough_left(&m, words(&far, 0)) == 0, "no rising lane");
	return failures != 0;
}
