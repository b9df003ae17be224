/* Runs `ptrev decode --raw ...` without the ptrev CLI: argv[1..] are the
 * arguments after "decode" (so argv[1] is "--raw"). */
#include "ptrev/raw_decode.h"

int main(int argc, char **argv)
{
	argv[0] = "decode";
	return decode_raw_main(argc, argv);
}
