/* Predicting passes of a loop from its induction registers
 * (include/ptrev/pass_model.h). */
#include "ptrev/pass_model.h"

#include <stddef.h>
#include <string.h>

/* Registers the model leaves alone: orig_rax is not state (the replay
 * does not compare it), and eflags, though compared, changes with every
 * compare: the last pass of a loop has other flags than the ones before
 * it, so flags that stayed the same would rule out the target. */
static bool ignored(size_t i)
{
	return i == offsetof(struct user_regs_struct, orig_rax) / sizeof(uint64_t) ||
	       i == offsetof(struct user_regs_struct, eflags) / sizeof(uint64_t);
}

static bool predicted(const struct pass_model *m, size_t i)
{
	return !ignored(i) && m->same[i] >= PASS_MODEL_SAMPLES;
}

/* How many steps of `step` make `diff` (wrapping differences read as
 * signed): > 0, or 0 when no whole positive number does. */
static uint64_t steps_in(uint64_t diff, int64_t step)
{
	int64_t d = (int64_t)diff;
	if (step == 0 || (step == -1 && d == INT64_MIN) || d % step != 0 || d / step <= 0)
		return 0;
	return (uint64_t)(d / step);
}

void pass_model_init(struct pass_model *m)
{
	memset(m, 0, sizeof *m);
}

void pass_model_feed(struct pass_model *m, const uint64_t *r)
{
	for (size_t i = 0; m->seen && i < PASS_MODEL_WORDS; i++) {
		int64_t d = (int64_t)(r[i] - m->last[i]);
		if (m->same[i] && d == m->step[i]) {
			m->same[i]++;
		} else {
			m->step[i] = d;
			m->same[i] = 1;
		}
	}
	memcpy(m->last, r, sizeof m->last);
	m->seen++;
}

/* After how many passes from the last one fed the model's words are w's:
 * the one number every induction word says, every invariant w's
 * already; 0 where there is none. */
static uint64_t passes_to(const struct pass_model *m, const uint64_t *w)
{
	uint64_t n = 0;
	for (size_t i = 0; i < PASS_MODEL_WORDS; i++) {
		if (!predicted(m, i))
			continue;
		if (m->step[i] == 0) {
			if (w[i] != m->last[i])
				return 0;
			continue;
		}
		uint64_t q = steps_in(w[i] - m->last[i], m->step[i]);
		if (q == 0 || (n && q != n))
			return 0;
		n = q;
	}
	return n;
}

uint64_t pass_model_left(const struct pass_model *m, const uint64_t *t)
{
	return passes_to(m, t);
}

uint64_t pass_model_jump(struct pass_model *m, const uint64_t *r)
{
	uint64_t n = passes_to(m, r);
	if (n == 0)
		return 0;
	/* Words outside the model changed by who knows how much: their
	 * run of equal changes starts again. */
	for (size_t i = 0; i < PASS_MODEL_WORDS; i++)
		if (!predicted(m, i))
			m->same[i] = 0;
	memcpy(m->last, r, sizeof m->last);
	m->seen += n;
	return n;
}
