# program: e2e_exit
# Exit 0: "exited normally".
target remote @TARGET@
continue
