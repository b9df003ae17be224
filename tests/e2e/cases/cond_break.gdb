# program: e2e_basic
# A conditional breakpoint evaluated by gdb: only the iteration with i == 3
# stops.  (cond_break_target.gdb lets the server evaluate it.)
set breakpoint condition-evaluation host
target remote @TARGET@
break f if i == 3
continue
print i
print global_counter
info breakpoints
continue
