/* How many more times a loop passes a PC before its registers are what a
 * STATE record holds: a prediction from the registers at the passes seen
 * so far, so that a replay looking for a point inside a hot loop need not
 * trap at every pass (replay/event_skip.c).
 *
 * At each pass of the PC the model sees words of the thread's state: its
 * general registers, and the stack around rsp where the STATE record
 * holds it (code compiled without optimisation keeps its loop counters
 * there). A word whose change per pass has been the same for
 * PASS_MODEL_SAMPLES passes in a row is taken to keep changing so: an
 * induction word (a loop counter, a pointer walking an array) when the
 * change is not zero, an invariant when it is. It predicts only when
 * every invariant already equals the target, and every induction word
 * reaches its target value after the same whole number of passes. Words
 * that change otherwise (an accumulator, a hash) say nothing; the replay
 * compares them, and the whole state, at the pass the model names.
 *
 * A prediction is a guess: the loop may end, be nested in one whose
 * counter lives in memory, or change its step. The caller checks every
 * jump against the model (pass_model_jump) and the state at the pass it
 * named, and replays again without predictions where either fails. */
#ifndef PTREV_PASS_MODEL_H
#define PTREV_PASS_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/user.h>

/* The words: user_regs_struct, then PASS_MODEL_STACK words of stack (0
 * where there is none). */
#define PASS_MODEL_REGS (sizeof(struct user_regs_struct) / sizeof(uint64_t))
#define PASS_MODEL_STACK 64
#define PASS_MODEL_WORDS (PASS_MODEL_REGS + PASS_MODEL_STACK)
#define PASS_MODEL_SAMPLES 16
/* Each word is read three ways (lanes): whole, and each 32-bit half on
 * its own, wrapping as a 32-bit number does. A stack word often holds
 * two ints of unoptimised code, a loop counter beside a value that
 * changes otherwise (rec_loop's i and x): the whole word says nothing,
 * its counter's half does. */
#define PASS_MODEL_LANES (3 * PASS_MODEL_WORDS)

/* Passes in a row a lane must have grown at, by any amount, to count as
 * rising (pass_model_rough_left): more than a value that changes
 * otherwise grows at by chance. */
#define PASS_MODEL_RISING 64

struct pass_model {
	uint64_t last[PASS_MODEL_LANES]; /* at the latest pass seen */
	int64_t step[PASS_MODEL_LANES];  /* change per pass */
	uint32_t same[PASS_MODEL_LANES]; /* passes in a row with that change */
	uint64_t rise_from[PASS_MODEL_LANES]; /* where its rise began */
	uint64_t rising[PASS_MODEL_LANES];    /* passes since, each higher */
	uint64_t seen;                   /* passes fed */
};

void pass_model_init(struct pass_model *m);

/* The words at the pass after the last one fed. */
void pass_model_feed(struct pass_model *m, const uint64_t *words);

/* Passes after the last one fed until the model's words equal
 * target's: > 0, or 0 when the model cannot say (too few passes seen, an
 * invariant that differs, induction registers that disagree, a target
 * behind or between two passes). */
uint64_t pass_model_left(const struct pass_model *m, const uint64_t *target);

/* The thread was let run without counting and stands at a pass again,
 * with words: how many passes it made since the last one fed, when every
 * word the model predicts says the same number (> 0); the words are then
 * the latest seen. 0 when they do not agree: the model does not
 * describe the loop (nothing is changed). */
uint64_t pass_model_jump(struct pass_model *m, const uint64_t *words);

/* Where no lane steps evenly (the PC is in a function a loop calls now
 * and then: rec_loop's f0, called at one pass in three or so), a loop
 * counter still grows at every pass, by uneven amounts. An estimate of
 * the passes left from such rising lanes: the least over them of the
 * distance to target's value over their mean growth per pass, when
 * every invariant already equals target's and every rising lane is
 * below target's (> 0); 0 where it cannot say. An estimate, not a count:
 * passes may be let go only as far as it is a small part of. */
uint64_t pass_model_rough_left(const struct pass_model *m, const uint64_t *target);

/* After letting passes go on such an estimate, the thread stands at a
 * pass with words: an estimate of the passes made (> 0) when every
 * invariant is unchanged and every rising lane grew and is still below
 * target's, the words then the latest seen; 0 (nothing changed) when
 * not: the point may have been passed, or the model was wrong. */
uint64_t pass_model_rough_jump(struct pass_model *m, const uint64_t *words,
			       const uint64_t *target);

/* Has a rising lane gone past target's value at the last pass fed? Then
 * passes let go on an estimate held the point, though the lanes were
 * below it where the run ended (a counter that went back on the way),
 * and counting on would trap at every pass to the loop's end. */
bool pass_model_rough_passed(const struct pass_model *m, const uint64_t *target);

#endif
