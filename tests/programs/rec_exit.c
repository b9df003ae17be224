/* Recorder test: `ptrev record` exits with the program's status (3); with
 * an argument the program dies of SIGSEGV instead (139). */
#include <stdlib.h>

int main(int argc, char **argv)
{
	(void)argv;
	if (argc > 1) {
		volatile int *p = (int *)(long)(argc - 2);
		*p = 1;
	}
	exit(3);
}
