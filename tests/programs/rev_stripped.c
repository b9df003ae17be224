/* Calls two levels deep, twice, in code that the build then strips of
 * every symbol (rev_basic_stripped keeps only .eh_frame, as Debian's
 * binaries do): reverse-finish and reverse-next out of a function gdb has
 * no symbols for, compared with gdb's record full. */
volatile int sink;

__attribute__((noinline)) void inner(int x)
{
	sink += x;
}

__attribute__((noinline)) void outer(int x)
{
	inner(x);
	sink += 1;
}

int main(void)
{
	outer(1);
	outer(2);
	return sink == 4 ? 0 : 1;
}
