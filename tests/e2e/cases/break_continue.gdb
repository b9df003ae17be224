# program: e2e_basic
# Breakpoints by function and by line, continue between them, run to exit.
target remote @TARGET@
break leaf
break e2e_basic.c:56
info breakpoints
continue
continue
continue
info breakpoints
delete
continue
