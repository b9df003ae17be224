/* The command line: `ptrev serve|record|replay|info|decode ...`. */
#ifndef PTREV_CLI_H
#define PTREV_CLI_H

int cli_main(int argc, char **argv);

/* `ptrev record [--backend auto|pt|sw] [--psb-period BYTES] [--no-copy]
 * -o FILE -- PROG [ARGS...]`; argv[0] is "record". Returns the program's
 * exit status (128+signal when killed), 2 for usage and start-up errors,
 * 130/143 when ptrev itself was interrupted by SIGINT/SIGTERM. */
int record_main(int argc, char **argv);

#endif
