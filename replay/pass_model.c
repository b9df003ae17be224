/* Predicting passes of a loop from its induction registers
 * (include/ptrev/pass_model.h). */
#include "ptrev/pass_model.h"

#include <stddef.h>
#include <string.h>

/* Registers the model leaves alone: orig_rax is not state (the replay
 * does not compare it), and eflags, though compared, changes with every
 * compare: the last pass of a loop has other flags than the ones before
 * it, so flags that stayed the same would rule out the target. */
static bool ignored(size_t word)
{
	return word == offsetof(struct user_regs_struct, orig_rax) / sizeof(uint64_t) ||
	       word == offsetof(struct user_regs_struct, eflags) / sizeof(uint64_t);
}

/* Lane 3i is word i whole, 3i+1 its low half, 3i+2 its high half. */
static bool half(size_t lane)
{
	return lane % 3 != 0;
}

static void lanes_of(const uint64_t *w, uint64_t *l)
{
	for (size_t i = 0; i < PASS_MODEL_WORDS; i++) {
		l[3 * i] = w[i];
		l[3 * i + 1] = (uint32_t)w[i];
		l[3 * i + 2] = w[i] >> 32;
	}
}

/* b - a in lane's width, signed. */
static int64_t lane_diff(size_t lane, uint64_t b, uint64_t a)
{
	return half(lane) ? (int64_t)(int32_t)(uint32_t)(b - a) : (int64_t)(b - a);
}

static bool steady(const struct pass_model *m, size_t lane)
{
	return m->same[lane] >= PASS_MODEL_SAMPLES;
}

/* A half speaks only for a word that does not as a whole: a 64-bit
 * counter or pointer carries into its high half now and then, which
 * would read as an invariant that changed. And only as a counter: the
 * high half of a value that grows unevenly (a sum, live_wait's spins)
 * stays the same for billions of passes, and is not the point's. */
static bool predicted(const struct pass_model *m, size_t lane)
{
	if (ignored(lane / 3) || !steady(m, lane))
		return false;
	return !half(lane) || (m->step[lane] != 0 && !steady(m, lane - lane % 3));
}

/* How many steps of `step` make `d`: > 0, or 0 when no whole positive
 * number does. (A half's count is at most 2^31 / |step|, its difference
 * wrapping past that: a point further away is named wrong, and the
 * replay's comparison of the state at the pass named finds it.) */
static uint64_t steps_in(int64_t d, int64_t step)
{
	if (step == 0 || (step == -1 && d == INT64_MIN) || d % step != 0 || d / step <= 0)
		return 0;
	return (uint64_t)(d / step);
}

void pass_model_init(struct pass_model *m)
{
	memset(m, 0, sizeof *m);
}

void pass_model_feed(struct pass_model *m, const uint64_t *words)
{
	uint64_t r[PASS_MODEL_LANES];
	lanes_of(words, r);
	for (size_t i = 0; m->seen && i < PASS_MODEL_LANES; i++) {
		int64_t d = lane_diff(i, r[i], m->last[i]);
		if (m->same[i] && d == m->step[i]) {
			m->same[i]++;
		} else {
			m->step[i] = d;
			m->same[i] = 1;
		}
		if (d <= 0) {
			m->rising[i] = 0;
		} else if (m->rising[i]++ == 0) {
			m->rise_from[i] = m->last[i];
		}
	}
	memcpy(m->last, r, sizeof m->last);
	m->seen++;
}

/* After how many passes from the last one fed the model's lanes are l's:
 * the one number every induction lane says, every invariant l's
 * already; 0 where there is none. */
static uint64_t passes_to(const struct pass_model *m, const uint64_t *l)
{
	uint64_t n = 0;
	for (size_t i = 0; i < PASS_MODEL_LANES; i++) {
		if (!predicted(m, i))
			continue;
		if (m->step[i] == 0) {
			if (l[i] != m->last[i])
				return 0;
			continue;
		}
		uint64_t q = steps_in(lane_diff(i, l[i], m->last[i]), m->step[i]);
		if (q == 0 || (n && q != n))
			return 0;
		n = q;
	}
	return n;
}

uint64_t pass_model_left(const struct pass_model *m, const uint64_t *target)
{
	uint64_t l[PASS_MODEL_LANES];
	lanes_of(target, l);
	return passes_to(m, l);
}

uint64_t pass_model_jump(struct pass_model *m, const uint64_t *words)
{
	uint64_t r[PASS_MODEL_LANES];
	lanes_of(words, r);
	uint64_t n = passes_to(m, r);
	if (n == 0)
		return 0;
	/* Lanes outside the model changed by who knows how much: their
	 * run of equal changes starts again. */
	for (size_t i = 0; i < PASS_MODEL_LANES; i++)
		if (!predicted(m, i))
			m->same[i] = 0;
	memcpy(m->last, r, sizeof m->last);
	m->seen += n;
	return n;
}

/* A lane that has grown at every one of the last PASS_MODEL_RISING
 * passes or more, and does not step evenly (those count exactly); a
 * half only for a word that does not rise as a whole. */
static bool rising(const struct pass_model *m, size_t lane)
{
	if (ignored(lane / 3) || m->rising[lane] < PASS_MODEL_RISING || steady(m, lane))
		return false;
	size_t whole = lane - lane % 3;
	return !half(lane) || (m->rising[whole] < PASS_MODEL_RISING && !steady(m, whole));
}

/* Every invariant lane as in l? */
static bool invariants_hold(const struct pass_model *m, const uint64_t *l)
{
	for (size_t i = 0; i < PASS_MODEL_LANES; i++)
		if (predicted(m, i) && m->step[i] == 0 && l[i] != m->last[i])
			return false;
	return true;
}

/* Passes that growth g of rising lane i stands for, at its mean growth
 * per pass (at least 1). */
static uint64_t passes_for(const struct pass_model *m, size_t i, int64_t g)
{
	int64_t grown = lane_diff(i, m->last[i], m->rise_from[i]);
	double per = grown > 0 ? (double)grown / (double)m->rising[i] : 1.0;
	double n = (double)g / per;
	return n < 1 ? 1 : n > 1e18 ? (uint64_t)1e18 : (uint64_t)n;
}

uint64_t pass_model_rough_left(const struct pass_model *m, const uint64_t *target)
{
	uint64_t t[PASS_MODEL_LANES], n = 0;
	lanes_of(target, t);
	if (!invariants_hold(m, t))
		return 0;
	for (size_t i = 0; i < PASS_MODEL_LANES; i++) {
		if (!rising(m, i))
			continue;
		int64_t d = lane_diff(i, t[i], m->last[i]);
		if (d <= 0)
			return 0;
		uint64_t q = passes_for(m, i, d);
		if (n == 0 || q < n)
			n = q;
	}
	return n;
}

uint64_t pass_model_rough_jump(struct pass_model *m, const uint64_t *words,
			       const uint64_t *target)
{
	uint64_t r[PASS_MODEL_LANES], t[PASS_MODEL_LANES], n = 0;
	bool rises[PASS_MODEL_LANES];
	lanes_of(words, r);
	lanes_of(target, t);
	if (!invariants_hold(m, r))
		return 0;
	bool any = false;
	for (size_t i = 0; i < PASS_MODEL_LANES; i++) {
		/* Taken before anything changes: whether a half rises depends
		 * on its whole word's counts, which the update below resets. */
		rises[i] = rising(m, i);
		if (!rises[i])
			continue;
		int64_t g = lane_diff(i, r[i], m->last[i]);
		if (g <= 0 || lane_diff(i, t[i], r[i]) <= 0)
			return 0;
		uint64_t q = passes_for(m, i, g);
		if (!any || q < n)
			n = q;
		any = true;
	}
	if (!any)
		return 0;
	for (size_t i = 0; i < PASS_MODEL_LANES; i++) {
		if (rises[i])
			m->rising[i] += n; /* its mean growth as it was */
		else if (!(predicted(m, i) && m->step[i] == 0))
			m->same[i] = m->rising[i] = 0; /* who knows how it went */
	}
	memcpy(m->last, r, sizeof m->last);
	m->seen += n;
	return n;
}

bool pass_model_rough_passed(const struct pass_model *m, const uint64_t *target)
{
	uint64_t t[PASS_MODEL_LANES];
	lanes_of(target, t);
	for (size_t i = 0; i < PASS_MODEL_LANES; i++)
		if (rising(m, i) && lane_diff(i, m->last[i], t[i]) > 0)
			return true;
	return false;
}
