/* Inferior for test_xfer: a dynamically linked program that stops itself in
 * main, after ld.so has filled in r_debug and loaded libc. */
#include <signal.h>

int main(void)
{
	raise(SIGSTOP);
	return 0;
}
