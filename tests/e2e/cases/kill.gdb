# program: e2e_basic
# kill at a breakpoint.
target remote @TARGET@
break outer
continue
kill
info threads
