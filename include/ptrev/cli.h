/* The command line: `ptrev serve|record|replay|info|decode ...`. */
#ifndef PTREV_CLI_H
#define PTREV_CLI_H

int cli_main(int argc, char **argv);

#endif
