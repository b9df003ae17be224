/* A library of tests/programs/use_mark.c, built twice (libmark.so and
 * libmark_b.so, STEP 2 and 3: two builds of the same soname) so that
 * tests/reverse/replaced_binary.py can put the other build where the
 * recorded one was. */
#ifndef STEP
#define STEP 2
#endif

int mark_scale(int x)
{
	return x * STEP + 1;
}
